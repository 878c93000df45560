// `kwave demo`: a simulated cluster of 60 pods, then `plans/demo.yaml` run against it through the
// same code that talks to a real cluster, then the proof: every pod's ImageID changed, each
// container restarted once, no pod recreated. `--keep` leaves the cluster up for kubectl;
// `--gate` adds a real Prometheus and a canary whose error rate halts the rollout.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { ExitCode } from '../../errors.js';
import { packagePath } from '../../packageRoot.js';
import { containerStatus } from '../../inplace/podView.js';
import { loadPlanText } from '../../plan/load.js';
import { startSim, type Sim } from '../../sim/index.js';
import type { CommandContext } from '../context.js';
import { runPlanCommand } from '../runPlanCommand.js';
import { findOnPath, freePort, startPrometheus, type PrometheusServer } from '../prometheusProcess.js';

const DEMO_PODS = 60;
const PLANS = packagePath('plans');

export async function run(ctx: CommandContext, _args: string[], opts: Record<string, unknown>): Promise<number> {
  const { io } = ctx;
  const say = (line: string) => {
    if (ctx.common.output === 'text') io.stdout.write(line + '\n');
  };
  const dir = await mkdtemp(join(tmpdir(), 'kwave-demo-'));
  const kubeconfig = join(dir, 'kubeconfig');
  say(`kwave demo: a simulated cluster (API server + kubelet, HTTPS) with ${DEMO_PODS} pods on nginx:1.14.2`);
  const sim = await startSim({ pods: DEMO_PODS, kubeconfigOut: kubeconfig });
  const uidsBefore = new Map(pods(sim).map((p) => [p.metadata!.name!, p.metadata!.uid!]));
  let prometheus: PrometheusServer | undefined;
  try {
    // The default metrics port may be taken on a developer's machine; the demo takes any free one.
    const metricsAddress = ctx.common.metricsAddress === '127.0.0.1:9464' ? '127.0.0.1:0' : ctx.common.metricsAddress;
    let planFile = join(PLANS, opts.gate ? 'demo-gate.yaml' : 'demo.yaml');
    let planText = await readFile(planFile, 'utf8');
    let kwaveMetricsPort = 0;
    if (opts.gate) {
      // Prometheus scrapes the simulator's app metrics and kwave's own; the plan's gate asks it.
      if (!findOnPath('prometheus')) {
        io.stderr.write('kwave demo --gate needs the prometheus binary on PATH (Debian: apt-get install prometheus)\n');
        return ExitCode.BAD_INPUT;
      }
      kwaveMetricsPort = await freePort();
      prometheus = await startPrometheus({
        targets: [hostPort(sim.metricsUrl), `127.0.0.1:${kwaveMetricsPort}`],
        scrapeIntervalSeconds: 1,
      });
      say(`Prometheus ${prometheus.url} scrapes the pods' traffic metrics and kwave's own`);
      planText = planText.replaceAll('http://127.0.0.1:9090', prometheus.url);
      planFile = join(dir, 'demo-gate.yaml');
      await writeFile(planFile, planText);
    }
    const loaded = loadPlanText(planText, planFile);
    if (!loaded.ok) throw new Error(`the demo plan is invalid: ${loaded.errors[0]?.message ?? ''}`);
    const plan = loaded.plan;
    say(
      `running ${opts.gate ? 'plans/demo-gate.yaml' : 'plans/demo.yaml'}: ${describeWaves(planText)}, ${plan.strategy.concurrency} at a time, at most ${plan.strategy.maxUnavailable.value} unavailable\n`,
    );

    const code = await runPlanCommand(
      {
        io,
        common: {
          ...ctx.common,
          kubeconfig,
          context: undefined,
          metricsAddress: opts.gate ? `127.0.0.1:${kwaveMetricsPort}` : metricsAddress,
        },
      },
      { plan, planFile, direction: 'upgrade', metricsLingerMs: opts.gate ? 3000 : 0 },
    );
    say('');
    say(proof(sim, uidsBefore, plan.update.containers[0]?.image ?? '', 'nginx:1.14.2'));
    if (opts.keep) {
      say(
        `\nthe simulated cluster keeps running; try:\n  kubectl --kubeconfig ${kubeconfig} get pods -o wide\n  kubectl --kubeconfig ${kubeconfig} get events\nCtrl-C stops it.`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
    }
    return code;
  } finally {
    await prometheus?.stop();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function pods(sim: Sim): V1Pod[] {
  return sim.store.list('pods', 'default') as unknown as V1Pod[];
}

/** The in-place proof, read from the cluster: which ImageID each pod runs, restarts, same pod (uid). */
function proof(sim: Sim, uidsBefore: Map<string, string>, target: string, original: string): string {
  const all = pods(sim);
  const idOf = (image: string) => {
    const info = sim.images.lookup(image);
    return info ? `${info.repository}@${info.servesDigest ?? info.digest}` : '';
  };
  const short = (id: string) =>
    id.replace(/^docker\.io\/library\//, '').replace(/(sha256:[0-9a-f]{12})[0-9a-f]+/, '$1…');
  const on = (id: string) => all.filter((p) => containerStatus(p, 'nginx')?.imageID === id);
  const onTarget = on(idOf(target));
  const onOriginal = on(idOf(original));
  const same = all.filter((p) => uidsBefore.get(p.metadata!.name!) === p.metadata!.uid).length;
  const restarts = [...new Set(onTarget.map((p) => containerStatus(p, 'nginx')?.restartCount ?? 0))].join(', ');
  const lines = [`proof: ${onTarget.length}/${all.length} pods run imageID ${short(idOf(target))} (${target})`];
  if (onOriginal.length > 0) {
    const back = onOriginal.filter((p) => (containerStatus(p, 'nginx')?.restartCount ?? 0) > 0).length;
    lines.push(
      `       ${onOriginal.length}/${all.length} run ${short(idOf(original))} (${original})${back ? `, ${back} rolled back in place` : ''}`,
    );
  }
  if (onTarget.length > 0)
    lines.push(`       container restarts of the upgraded pods: ${restarts} (replaced in place)`);
  lines.push(`       ${same}/${all.length} pods are the same pods as before (uid unchanged, none recreated)`);
  return lines.join('\n');
}

function describeWaves(planText: string): string {
  const m = /waves:\s*(\[[^\]]*\])/.exec(planText);
  return m ? `waves ${m[1]}` : 'waves';
}

function hostPort(url: string): string {
  return new URL(url).host;
}
