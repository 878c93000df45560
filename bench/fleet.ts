// Fleet benchmark, as a user runs kwave: `kwave sim` and `kwave run` as separate processes, the
// simulator's default timings without jitter, waves [1, "10%", "50%", "100%"], concurrency =
// maxUnavailable. Per size: wall time against the kubelet-limited ideal (bench/fleet/ideal.ts),
// kwave's peak RSS and CPU from GNU time, the simulator's CPU from /proc, API requests per pod
// from /sim/stats, time to the first pod patched, and `kwave plan`'s time and RSS; at the sizes
// asked, the kubectl loop a user would write instead (bench/fleet/kubectl-loop.sh) on the same
// simulator, back to the old image. Prints a table and writes one JSON file per size.
// `--client bare` runs bench/fleet/bare-client.mjs instead of `kwave run`: kwave's cluster module
// doing the same waves with none of kwave's engine, the floor that module puts under a pod;
// `--client minimal` runs bench/fleet/minimal-client.mjs, the least any Node client does for the
// same steps (HTTPS, JSON.parse, one watch), the floor under both. Their rows stand where kwave's
// would; no `kwave plan`, no kubectl loop; files fleet-N-bare.json, fleet-N-minimal.json.
//
//   npm run bench -- [--pods 1000,10000] [--repeat 1] [--baseline 1000] [--control-plane embedded|real] [--client kwave|bare|minimal]
//                    [--concurrency N] [--out bench/results] [--cpu-prof DIR] [--sim-cpu-prof DIR] [--kwave-args "..."] [--kwave-node-args "--max-semi-space-size=1"] [--sim-node-args "..."]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg, cpus } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadPlanText } from '../src/plan/load.js';
import { resolveTargets } from '../src/rollout/waves.js';
import { DEFAULT_TIMING } from '../src/sim/clock.js';
import { idealTime } from './fleet/ideal.js';
import { apiFigures, freePort, scrapeAtEnd, type ApiFigures } from './fleet/apiFigures.js';
import {
  cpuSecondsOf,
  memoryOf,
  requireGnuTime,
  runTimed,
  startSimProcess,
  type SimProcess,
} from './fleet/processes.js';

const { values: flags } = parseArgs({
  options: {
    pods: { type: 'string', default: process.env.BENCH_PODS ?? '1000,10000' },
    repeat: { type: 'string', default: '1' },
    baseline: { type: 'string', default: '1000' },
    'control-plane': { type: 'string', default: 'embedded' },
    client: { type: 'string', default: 'kwave' },
    concurrency: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
    'cpu-prof': { type: 'string' },
    'sim-cpu-prof': { type: 'string' },
    'kwave-args': { type: 'string', default: '' },
    'kwave-node-args': { type: 'string', default: '' },
    'sim-node-args': { type: 'string', default: '' },
  },
});
const SIZES = flags.pods.split(',').map(Number);
const REPEAT = Math.max(1, Number(flags.repeat));
const BASELINE_SIZES = new Set(flags.baseline.split(',').filter(Boolean).map(Number));
const CONTROL_PLANE = flags['control-plane'];
/**
 * A client script in place of `kwave run` (--client bare or minimal), with what its figures are of
 * and its V8 flags: the bare client runs with those bin/kwave.js sets for kwave's own commands; the
 * minimal client, which holds every pod whole (its RSS is no floor, its CPU is), with V8's defaults.
 */
const SCRIPTS = new Map([
  [
    'bare',
    {
      file: 'bench/fleet/bare-client.mjs',
      who: 'bare client',
      nodeArgs: ['--heap-growing-percent=50', '--liftoff-only'],
    },
  ],
  ['minimal', { file: 'bench/fleet/minimal-client.mjs', who: 'minimal client', nodeArgs: [] as string[] }],
]);
const SCRIPT = SCRIPTS.get(flags.client);
if (!SCRIPT && flags.client !== 'kwave') throw new Error(`--client: kwave, bare or minimal, not ${flags.client}`);
/** What the figures called kwave's are of. */
const who = SCRIPT?.who ?? 'kwave';
const NODES = 3;
const FROM_IMAGE = 'nginx:1.14.2';
const TO_IMAGE = 'nginx:1.25.3';
const WAVES = '[1, "10%", "50%", "100%"]';

const concurrencyFor = (pods: number) =>
  flags.concurrency ? Number(flags.concurrency) : Math.min(500, Math.max(1, Math.round(pods / 10)));
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function planText(concurrency: number, image: string): string {
  return `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: bench }
spec:
  target: { namespace: default, selector: { matchLabels: { app: demo } } }
  update: { containers: [{ name: nginx, image: "${image}" }] }
  strategy: { waves: ${WAVES}, concurrency: ${concurrency}, maxUnavailable: ${concurrency}, podTimeout: 5m }
`;
}

type Stats = { requests: Record<string, number>; maxNotReady: Record<string, number> };
async function stats(sim: SimProcess): Promise<Stats> {
  return (await (await fetch(`${sim.metricsUrl}/sim/stats`)).json()) as Stats;
}
async function resetStats(sim: SimProcess): Promise<void> {
  const r = await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' });
  if (!r.ok) throw new Error(`POST /sim/stats/reset: ${r.status}`);
}

/** Requests per pod by kind: writes (create/update/patch/delete), pod writes, reads (get/list), watches. */
function perPod(s: Stats, pods: number) {
  let writes = 0,
    podWrites = 0,
    reads = 0,
    watches = 0;
  for (const [key, n] of Object.entries(s.requests)) {
    const [verb, resource = ''] = key.split(' ');
    if (verb === 'create' || verb === 'update' || verb === 'patch' || verb === 'delete') {
      writes += n;
      if (resource === 'pods' || resource.startsWith('pods/')) podWrites += n;
    } else if (verb === 'get' || verb === 'list') reads += n;
    else if (verb === 'watch') watches += n;
  }
  return { writes: writes / pods, podWrites: podWrites / pods, reads: reads / pods, watches, requests: s.requests };
}

/** `1,234 requests/s; patch pods 3.1 ms mean (p50 2.0, p99 12.0); …` for the kinds kwave sends per pod. */
function apiLine(api: ApiFigures): string {
  const kinds = ['patch pods', 'patch pods/status'].filter((k) => api.byRequest[k]);
  const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  return [
    `${Math.round(api.perSecond).toLocaleString('en')} requests/s`,
    ...kinds.map(
      (k) =>
        `${k} ${ms(api.byRequest[k]!.meanMs)} ms mean (p50 ${ms(api.byRequest[k]!.p50Ms)}, p99 ${ms(api.byRequest[k]!.p99Ms)})`,
    ),
  ].join('; ');
}

function loadNote(): string {
  const [one, five] = loadavg();
  return `load average ${one!.toFixed(2)} (1 min), ${five!.toFixed(2)} (5 min) on ${cpus().length} CPUs`;
}

interface RunFigures {
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMb: number;
  firstPatchSeconds?: number;
  simCpuSeconds: number;
  simPeakRssMb: number;
  phase?: string;
  exitCode: number | null;
  upgraded: number;
  waitedForNode: number;
  requestsPerPod: ReturnType<typeof perPod>;
  maxNotReady: number;
  /** The API server as kwave saw it (its own metrics, scraped at the rollout's end). */
  api?: ApiFigures;
  loadBefore: string;
}

async function kwaveRun(
  sim: SimProcess,
  dir: string,
  planFile: string,
  pods: number,
  i: number,
  waves: { concurrency: number; waveSizes: number[] },
): Promise<RunFigures> {
  await resetStats(sim);
  const loadBefore = loadNote();
  const simCpu0 = cpuSecondsOf(sim.child.pid!);
  const prof = flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(flags['cpu-prof'])] : [];
  let phase: string | undefined;
  let upgraded = 0;
  // Flows a node stopped mid-flight (a heartbeat late on a busy control plane, say), each finished once the node was back or left for the next run.
  let waitedForNode = 0;
  const extra = flags['kwave-args'].split(' ').filter(Boolean);
  const nodeArgs = flags['kwave-node-args'].split(' ').filter(Boolean);
  // kwave serves its metrics for one scrape at the end (the linger ends with it, or after 5 s).
  const port = await freePort();
  const stdoutFile = path.join(dir, `run-${i}.jsonl`);
  let durationMs = NaN;
  const metrics = ['--metrics-address', `127.0.0.1:${port}`, '--metrics-linger', '5s'];
  const command = SCRIPT
    ? [
        ...SCRIPT.nodeArgs,
        SCRIPT.file,
        sim.kubeconfig,
        String(waves.concurrency),
        TO_IMAGE,
        ...waves.waveSizes.map(String),
      ]
    : ['bin/kwave.js', 'run', planFile, '--kubeconfig', sim.kubeconfig, '-o', 'json', ...metrics, ...extra];
  const running = runTimed([...prof, ...nodeArgs, ...command], {
    usageFile: path.join(dir, `run-${i}.time`),
    stdoutFile,
    firstLine: (l) => l.includes('"event":"pod-step"') && l.includes('"step":"patch"'),
    onLine: (l) => {
      if (l.includes('"event":"pod-end"') && l.includes('"result":"upgraded"')) upgraded++;
      else if (l.includes('"step":"wait-node"')) waitedForNode++;
      else if (l.includes('"event":"rollout-end"'))
        ({ phase, durationMs } = JSON.parse(l) as { phase: string; durationMs: number });
      else if (SCRIPT && l.startsWith('{"upgraded"')) ({ upgraded } = JSON.parse(l) as { upgraded: number });
    },
  });
  const exited = new AbortController();
  const scraped = SCRIPT
    ? Promise.resolve(undefined)
    : scrapeAtEnd(stdoutFile, `http://127.0.0.1:${port}/metrics`, exited.signal);
  const r = await running.finally(() => exited.abort());
  const exposition = await scraped;
  // A run that stopped early is reported (exit code, pods upgraded), not thrown away: its CPU per pod still counts.
  if (r.code !== 0) console.log(`  kwave run exited ${r.code}: ${r.stderr.trim().slice(-500)}`);
  if (r.stderr.includes('Warning')) console.log(`  kwave printed on stderr: ${r.stderr.trim().slice(0, 500)}`);
  const s = await stats(sim);
  return {
    wallSeconds: r.usage.wallSeconds,
    cpuSeconds: r.usage.cpuSeconds,
    peakRssMb: mb(r.usage.peakRssBytes),
    firstPatchSeconds: r.firstMatchSeconds,
    simCpuSeconds: cpuSecondsOf(sim.child.pid!) - simCpu0,
    simPeakRssMb: mb(memoryOf(sim.child.pid!).peakRssBytes),
    phase,
    exitCode: r.code,
    upgraded,
    waitedForNode,
    requestsPerPod: perPod(s, Math.max(1, upgraded)),
    maxNotReady: s.maxNotReady.default ?? 0,
    ...(exposition === undefined ? {} : { api: apiFigures(exposition, durationMs / 1000) }),
    loadBefore,
  };
}

/** Rolls the pods back and forth so that each repeat upgrades every pod. */
async function kubectlLoop(
  sim: SimProcess,
  image: string,
  concurrency: number,
  waveSizes: number[],
): Promise<{ wallSeconds: number; requestsPerPod: ReturnType<typeof perPod> }> {
  await resetStats(sim);
  const t0 = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(
      'bash',
      [
        'bench/fleet/kubectl-loop.sh',
        'default',
        'app=demo',
        'nginx',
        image,
        String(concurrency),
        ...waveSizes.map(String),
      ],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, KUBECONFIG: sim.kubeconfig },
      },
    );
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`the kubectl loop exited ${code}`);
  return {
    wallSeconds: (performance.now() - t0) / 1000,
    requestsPerPod: perPod(
      await stats(sim),
      waveSizes.reduce((a, b) => a + b, 0),
    ),
  };
}

async function kwavePlan(sim: SimProcess, dir: string, planFile: string) {
  const r = await runTimed(
    ['bin/kwave.js', 'plan', planFile, '--kubeconfig', sim.kubeconfig, '-o', 'json', '--metrics-address', 'off'],
    { usageFile: path.join(dir, 'plan.time'), stdoutFile: path.join(dir, 'plan.json') },
  );
  if (r.code !== 0) throw new Error(`kwave plan exited ${r.code}: ${r.stderr.trim().slice(-2000)}`);
  return { wallSeconds: r.usage.wallSeconds, cpuSeconds: r.usage.cpuSeconds, peakRssMb: mb(r.usage.peakRssBytes) };
}

async function benchSize(pods: number) {
  const concurrency = concurrencyFor(pods);
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-fleet-'));
  const simArgs = [
    '--pods',
    String(pods),
    '--port',
    '0',
    '--metrics-port',
    '0',
    '--jitter',
    '0',
    ...(CONTROL_PLANE === 'embedded' ? [] : ['--control-plane', CONTROL_PLANE]),
  ];
  const loaded = loadPlanText(planText(concurrency, TO_IMAGE), 'bench.yaml');
  if (!loaded.ok) throw new Error(loaded.errors[0]?.message);
  const targets = resolveTargets(loaded.plan.strategy.waves, pods);
  const waveSizes = targets.map((t, i) => t - (targets[i - 1] ?? 0));
  const ideal = idealTime({
    waveSizes,
    parallelism: concurrency,
    podMs: DEFAULT_TIMING.stopMs + DEFAULT_TIMING.startMs + DEFAULT_TIMING.readyMs,
    pullMs: DEFAULT_TIMING.pullMs,
    nodes: NODES,
  });
  const up = path.join(dir, 'up.yaml');
  writeFileSync(up, planText(concurrency, TO_IMAGE));

  const runs: RunFigures[] = [];
  const sims: { startSeconds: number; rssAfterStartMb: number }[] = [];
  let plan: Awaited<ReturnType<typeof kwavePlan>> | undefined;
  const baselines: number[] = [];
  try {
    // A fresh simulator per repeat: every repeat upgrades the same world, and the kubectl loop
    // (which changes images behind kwave's back) never leaves state for the next kwave run.
    for (let i = 0; i < REPEAT; i++) {
      let sim: SimProcess;
      try {
        const simProf = flags['sim-cpu-prof']
          ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(flags['sim-cpu-prof'])]
          : [];
        const simNodeArgs = flags['sim-node-args'].split(' ').filter(Boolean);
        sim = await startSimProcess(simArgs, path.join(dir, `kubeconfig-${i}`), 600_000, [...simProf, ...simNodeArgs]);
      } catch (err) {
        if (CONTROL_PLANE !== 'embedded') {
          console.log(
            `  skipped: the simulator does not start with --control-plane ${CONTROL_PLANE} (${(err as Error).message.split('\n')[0]})`,
          );
          return undefined;
        }
        throw err;
      }
      try {
        sims.push({ startSeconds: sim.startSeconds, rssAfterStartMb: mb(memoryOf(sim.child.pid!).rssBytes) });
        if (i === 0 && !SCRIPT) plan = await kwavePlan(sim, dir, up);
        const run = await kwaveRun(sim, dir, up, pods, i, { concurrency, waveSizes });
        runs.push(run);
        console.log(
          `  run ${i + 1}: ${run.phase ?? who}, ${run.upgraded} upgraded${run.waitedForNode ? ` (${run.waitedForNode} pod flows waited for their node mid-flight)` : ''} in ${run.wallSeconds.toFixed(1)} s (ideal ${(ideal.ms / 1000).toFixed(1)} s), ${who} CPU ${run.cpuSeconds.toFixed(1)} s, RSS ${run.peakRssMb} MB, sim CPU ${run.simCpuSeconds.toFixed(1)} s; ${run.loadBefore}`,
        );
        if (run.api) console.log(`  API as kwave saw it: ${apiLine(run.api)}`);
        if (BASELINE_SIZES.has(pods) && !SCRIPT) {
          const b = await kubectlLoop(sim, FROM_IMAGE, concurrency, waveSizes);
          baselines.push(b.wallSeconds);
          console.log(
            `  kubectl loop: ${b.wallSeconds.toFixed(1)} s (${(b.wallSeconds / run.wallSeconds).toFixed(1)}× kwave), reads/pod ${b.requestsPerPod.reads.toFixed(1)}; ${loadNote()}`,
          );
        }
      } finally {
        await sim.stop();
      }
    }
    const last = runs[runs.length - 1]!;
    const wall = median(runs.map((r) => r.wallSeconds));
    const row = {
      pods,
      concurrency,
      controlPlane: CONTROL_PLANE,
      repeats: REPEAT,
      wallSeconds: wall,
      wallSecondsAll: runs.map((r) => r.wallSeconds),
      idealSeconds: ideal.ms / 1000,
      ratio: wall / (ideal.ms / 1000),
      kwaveCpuSeconds: median(runs.map((r) => r.cpuSeconds)),
      // Per upgraded pod: a run that stopped early is charged only for what it did.
      kwaveCpuMsPerPod: median(runs.map((r) => (r.cpuSeconds * 1000) / Math.max(1, r.upgraded))),
      kwavePeakRssMb: median(runs.map((r) => r.peakRssMb)),
      firstPatchSeconds: median(runs.map((r) => r.firstPatchSeconds ?? NaN)),
      simCpuSeconds: median(runs.map((r) => r.simCpuSeconds)),
      simStartSeconds: median(sims.map((x) => x.startSeconds)),
      simRssAfterStartMb: median(sims.map((x) => x.rssAfterStartMb)),
      simPeakRssMb: last.simPeakRssMb,
      writesPerPod: last.requestsPerPod.writes,
      podWritesPerPod: last.requestsPerPod.podWrites,
      readsPerPod: last.requestsPerPod.reads,
      watches: last.requestsPerPod.watches,
      requests: last.requestsPerPod.requests,
      maxNotReady: last.maxNotReady,
      phase: last.phase,
      exitCodes: runs.map((r) => r.exitCode),
      upgraded: last.upgraded,
      waitedForNode: last.waitedForNode,
      api: last.api,
      plan,
      kubectlLoopSeconds: baselines.length ? median(baselines) : undefined,
      kubectlOverKwave: baselines.length ? median(baselines) / wall : undefined,
      load: runs.map((r) => r.loadBefore),
      node: process.version,
      date: new Date().toISOString(),
    };
    mkdirSync(flags.out, { recursive: true });
    writeFileSync(
      path.join(
        flags.out,
        `fleet-${pods}${CONTROL_PLANE === 'embedded' ? '' : `-${CONTROL_PLANE}`}${SCRIPT ? `-${flags.client}` : ''}.json`,
      ),
      JSON.stringify(row, null, 2) + '\n',
    );
    return row;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

requireGnuTime();
console.log(
  `fleet benchmark: sizes ${SIZES.join(', ')}, repeats ${REPEAT}, control plane ${CONTROL_PLANE}${SCRIPT ? `, the ${SCRIPT.who} in place of kwave run` : ''}; ${loadNote()}`,
);
const rows: NonNullable<Awaited<ReturnType<typeof benchSize>>>[] = [];
for (const pods of SIZES) {
  console.log(`\n${pods} pods, concurrency ${concurrencyFor(pods)}`);
  const row = await benchSize(pods);
  if (row) rows.push(row);
}
const f = (n: unknown, d = 1) => (typeof n === 'number' && Number.isFinite(n) ? n.toFixed(d) : '–');
console.log(
  `\n| pods / concurrency | wall | ideal | ratio | ${who} RSS | ${who} CPU (ms/pod) | first patch | sim CPU | writes/pod (pods) | reads/pod | \`kwave plan\` | kubectl loop |`,
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const plan = r.plan;
  console.log(
    `| ${r.pods.toLocaleString('en')} / ${r.concurrency} | ${f(r.wallSeconds)} s | ${f(r.idealSeconds)} s | ${f(r.ratio, 2)} | ${r.kwavePeakRssMb} MB | ${f(r.kwaveCpuSeconds)} s (${f(r.kwaveCpuMsPerPod, 2)}) | ${f(r.firstPatchSeconds, 2)} s | ${f(r.simCpuSeconds)} s | ${f(r.writesPerPod, 2)} (${f(r.podWritesPerPod, 2)}) | ${f(r.readsPerPod, 3)} | ${plan ? `${f(plan.wallSeconds, 2)} s, ${plan.peakRssMb} MB` : '–'} | ${r.kubectlLoopSeconds === undefined ? '–' : `${f(r.kubectlLoopSeconds)} s (${f(r.kubectlOverKwave)}×)`} |`,
  );
}
for (const r of rows)
  if (r.api) console.log(`\n${r.pods.toLocaleString('en')} pods, the API server as kwave saw it: ${apiLine(r.api)}`);
