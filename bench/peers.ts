// Peer benchmark: kwave side by side with OpenKruise's CloneSet (and, if asked, the minimal client
// and the kubectl loop)
// on one real control plane, `kwave sim --control-plane real` (the simulated kubelet, or with
// `--kubelet real` the real one). Per size N, on the same three nodes: for each repeat and each
// tool (the order alternating between repeats), a fresh fleet of N pods in its own namespace,
// then the change — kwave: `kwave run` of one wave of N, concurrency = maxUnavailable = M,
// drainSeconds D; Kruise: the CloneSet's template image (updateStrategy InPlaceIfPossible,
// maxUnavailable M, gracePeriodSeconds D); minimal: bench/fleet/minimal-client.mjs, the bare
// protocol, M at once and D from its sight of the pod not Ready (the floor any client could reach);
// kubectl loop: bench/fleet/kubectl-loop.sh, M at once —
// measured by bench/peers/upgradeOnce.ts. kwave runs with Kruise installed, as in a shared cluster:
// Kruise's pod webhook judges kwave's patches too. Writes `peers-N.json` (rows: medians of the
// repeats, with where the pods' turns went) and prints a table.
//
//   npm run bench -- --peer kruise[,minimal][,kubectl-loop] --pods 200[,1000] [--repeat 3] [--max-unavailable 10%]
//                    [--drain 2] [--kubelet simulated|real] [--out bench/results]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AuditTail } from '../src/sim/controlPlane/audit.js';
import { ADMIN_USER } from '../src/sim/controlPlane/identities.js';
import { DEFAULT_NODES, defaultImages } from '../src/sim/fixture.js';
import { ImageTable } from '../src/sim/images.js';
import { requireGnuTime, startSimProcess } from './fleet/processes.js';
import {
  benchClient,
  cloneSetManifest,
  createCloneSet,
  createNamespace,
  createPodFleet,
  deleteNamespace,
  readKubeconfig,
  TO_IMAGE,
} from './peers/cluster.js';
import { kruiseManagerBinary, kruiseSourceDir } from './peers/kruiseBuild.js';
import { applyKruiseManifests, KRUISE_USER, startKruiseManager, type KruiseManager } from './peers/kruiseInstall.js';
import {
  budgetOvershoot,
  checkTargets,
  median,
  peerRow,
  peersFile,
  TOOLS,
  type PhasesRow,
  type KubeletKind,
  type Measurement,
  type Tool,
} from './peers/rows.js';
import { upgradeOnce, type Cluster, type Setting } from './peers/upgradeOnce.js';

const { values: flags } = parseArgs({
  options: {
    peer: { type: 'string', default: 'kruise' },
    pods: { type: 'string', default: '200' },
    repeat: { type: 'string', default: '3' },
    'max-unavailable': { type: 'string', default: '10%' },
    drain: { type: 'string', default: '2' },
    kubelet: { type: 'string', default: 'simulated' },
    out: { type: 'string', default: 'bench/results' },
  },
});
const peers = flags.peer.split(',').filter(Boolean);
for (const p of peers)
  if (p === 'kwave' || !(TOOLS as readonly string[]).includes(p))
    throw new Error(`--peer: any of kruise, minimal, kubectl-loop, not ${p}`);
const tools: Tool[] = ['kwave', ...(peers as Tool[])];
const SIZES = flags.pods.split(',').map(Number);
const REPEAT = Math.max(1, Number(flags.repeat));
const DRAIN = Number(flags.drain);
const KUBELET = flags.kubelet as KubeletKind;
if (KUBELET !== 'simulated' && KUBELET !== 'real')
  throw new Error(`--kubelet: simulated or real, not ${flags.kubelet}`);

/** M for N pods: a count, or a percentage of N rounded down (at least 1), as both tools are given it. */
function maxUnavailableFor(pods: number): number {
  const m = flags['max-unavailable'];
  return m.endsWith('%') ? Math.max(1, Math.floor((pods * Number(m.slice(0, -1))) / 100)) : Number(m);
}

const toDigest = new ImageTable(defaultImages()).lookup(TO_IMAGE)!.digest;
const load = () => `load ${loadavg()[0]!.toFixed(2)} on ${cpus().length} CPUs`;

/** A flag for a run that had more pods not Ready at once than M: by the tool's own pods, or with others'. */
function overshoot(m: Measurement, maxUnavailable: number): string {
  const { overByTool, overWithOthers } = budgetOvershoot(m, maxUnavailable);
  if (overByTool) return ` OVER THE BUDGET by ${overByTool} with its own pods`;
  return overWithOthers ? ` (over M by ${overWithOthers} with pods made not Ready by something else)` : '';
}

/** Writes peers-N.json with the measurements so far. */
function writePeersFile(setting: Setting, measurements: readonly Measurement[]) {
  const file = peersFile(
    { pods: setting.pods, maxUnavailable: setting.maxUnavailable, drainSeconds: DRAIN, kubelet: KUBELET },
    measurements,
  );
  mkdirSync(flags.out, { recursive: true });
  // The real kubelet's figures are the ones quoted (README); the simulated kubelet's are named apart.
  const out = path.join(flags.out, `peers-${setting.pods}${KUBELET === 'real' ? '' : '-simulated-kubelet'}.json`);
  writeFileSync(out, JSON.stringify(file, null, 2) + '\n');
  return { file, out };
}

/** A row's phases on one line. */
function phasesText(p: PhasesRow): string {
  return `first close ${p.first_close_s} s; close→not Ready ${p.close_to_not_ready_s} s, drain ${p.drain_s} s (min ${p.drain_min_s}), patch→running ${p.patch_to_running_s} s, running→Ready ${p.running_to_ready_s} s; window full ${p.window_full}`;
}

/** The order of the tools in repeat `i`: turned by one each repeat, so each goes first in turn. */
function orderOf(i: number): Tool[] {
  return tools.map((_, j) => tools[(i + j) % tools.length]!);
}

async function benchSize(pods: number, kruiseBinary: string | undefined): Promise<void> {
  const setting: Setting = { pods, maxUnavailable: maxUnavailableFor(pods), drainSeconds: DRAIN, toDigest };
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-peers-'));
  // The default three nodes, each admitting a whole fleet plus the warm-up pods.
  const fixture = path.join(dir, 'fixture.yaml');
  writeFileSync(
    fixture,
    JSON.stringify({
      apiVersion: 'kwave.dev/v1alpha1',
      kind: 'SimFixture',
      nodes: DEFAULT_NODES.map((n) => ({ ...n, maxPods: pods + 10 })),
      workloads: [],
    }),
  );
  const t0 = performance.now();
  const sim = await startSimProcess(
    ['--control-plane', 'real', '--kubelet', KUBELET, '--fixture', fixture, '--metrics-port', '0', '--jitter', '0'],
    path.join(dir, 'kubeconfig'),
    600_000,
  );
  let kruise: KruiseManager | undefined;
  const admin = readKubeconfig(sim.kubeconfig);
  const http = benchClient(admin);
  const measurements: (Measurement & { problems: string[]; exitCode?: number | null })[] = [];
  try {
    if (!sim.auditLog) throw new Error('kwave sim did not say where its audit log is');
    console.log(`  control plane up in ${sim.startSeconds.toFixed(1)} s`);
    if (kruiseBinary) {
      const n = applyKruiseManifests(kruiseSourceDir(), sim.kubeconfig, dir);
      const t = performance.now();
      kruise = await startKruiseManager({ binary: kruiseBinary, admin, http, dir });
      console.log(
        `  Kruise: ${n} objects applied; kruise-manager ready in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
    const cluster: Cluster = {
      http,
      kubeconfig: sim.kubeconfig,
      metricsUrl: sim.metricsUrl,
      audit: new AuditTail(sim.auditLog),
      adminUser: ADMIN_USER,
      ...(kruise ? { kruise: { pid: kruise.pid, user: KRUISE_USER } } : {}),
    };
    const nodes = DEFAULT_NODES.map((n) => n.name);
    // Every node pulls the target image once before any run: none of the tools pays a first pull.
    await createNamespace(http, 'warm-up');
    await createPodFleet(http, 'warm-up', nodes.length, nodes, TO_IMAGE);
    await deleteNamespace(http, 'warm-up', Boolean(kruise));
    console.log(`  set up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    for (let i = 0; i < REPEAT; i++) {
      for (const tool of orderOf(i)) {
        const ns = `${tool}-${i + 1}`;
        await createNamespace(http, ns);
        if (tool === 'kruise') await createCloneSet(http, cloneSetManifest(ns, pods, setting.maxUnavailable, DRAIN));
        else await createPodFleet(http, ns, pods, nodes);
        const loadBefore = load();
        const m = await upgradeOnce(tool, ns, setting, cluster, dir);
        measurements.push(m);
        writePeersFile(setting, measurements); // a run stopped part-way keeps what it measured
        const drains = m.drainsSeconds;
        console.log(
          `  ${i + 1}. ${tool.padEnd(12)} wall ${m.wallSeconds.toFixed(2)} s; writes/pod ${(m.writes.accepted / pods).toFixed(2)} (pods ${(m.writes.pods / pods).toFixed(2)}, refused ${m.writes.refused}); unready p50/p95/max ${m.unready.p50}/${m.unready.p95}/${m.unready.max} s; max not Ready ${m.maxNotReady} (watched ${m.maxNotReadyWatched}, the tool's ${m.maxNotReadyByTool}) of M ${setting.maxUnavailable}${overshoot(m, setting.maxUnavailable)}; drain min/p50 ${drains.length ? `${drains[0]!.toFixed(2)}/${median(drains).toFixed(2)} s` : '–'}, Ready again mid-drain ${m.readyMidDrain}, not Ready again after done ${m.readyLostAfterDone}; CPU ${m.cpuSeconds.toFixed(2)} s, RSS ${m.rssMb} MB; in place ${m.inPlace}${m.problems.length ? ` (${m.problems.join('; ')})` : ''}${m.exitCode ? `; exit ${m.exitCode}` : ''}; ${loadBefore}`,
        );
        console.log(`     phases ${phasesText(peerRow([m], setting.maxUnavailable).phases)}`);
        await deleteNamespace(http, ns, Boolean(kruise));
      }
    }
  } finally {
    await kruise?.stop();
    http.close();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const { file, out } = writePeersFile(setting, measurements);
  console.log(
    `\n${pods} pods, M ${setting.maxUnavailable}, D ${DRAIN} s, kubelet ${KUBELET}: medians of ${REPEAT} (${out})`,
  );
  console.log('| tool | wall | writes/pod | unready p50 / p95 | most not Ready | CPU | RSS | in place |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of file.rows)
    console.log(
      `| ${r.tool} | ${r.wall_s} s | ${r.writes_per_pod} | ${r.unready_p50_s} / ${r.unready_p95_s} s | ${r.max_not_ready} | ${r.cpu_s} s | ${r.rss_mb} MB | ${r.in_place ? 'yes' : 'no'} |`,
    );
  console.log('phases, medians (per run the p50 over pods):');
  for (const r of file.rows) console.log(`  ${r.tool.padEnd(12)} ${phasesText(r.phases)}`);
  for (const m of measurements) {
    const { overByTool } = budgetOvershoot(m, setting.maxUnavailable);
    if (overByTool)
      console.log(
        `${m.tool}: OVER THE BUDGET: ${m.maxNotReadyByTool} of its pods not Ready at once, M = ${setting.maxUnavailable}`,
      );
  }
  const t = checkTargets(file);
  if (t)
    console.log(
      `targets: wall ratio ${t.wallRatio} (≤ 0.8: ${t.wallRatio <= 0.8}); unready p95 ≤ Kruise's: ${t.unreadyP95}; writes/pod ≤ Kruise's: ${t.writesPerPod}; both in place: ${t.inPlace}${t.floorRatio === undefined ? '' : `; the floor (minimal / Kruise) ${t.floorRatio}${t.floorRatio > 0.8 ? ': 0.8 is below the floor' : ''}`}`,
    );
}

requireGnuTime();
const kruiseBinary = peers.includes('kruise') ? kruiseManagerBinary((l) => console.log(l)) : undefined;
if (kruiseBinary)
  console.log(
    `kruise-manager ${kruiseBinary.version}: ${kruiseBinary.builtSeconds === undefined ? 'cached build' : `built in ${kruiseBinary.builtSeconds.toFixed(0)} s`} (${kruiseBinary.sizeMiB.toFixed(0)} MiB) ${kruiseBinary.path}`,
  );
console.log(
  `peer benchmark: ${tools.join(', ')}; sizes ${SIZES.join(', ')}; repeats ${REPEAT}; kubelet ${KUBELET}; ${load()}`,
);
for (const pods of SIZES) {
  console.log(`\n${pods} pods`);
  await benchSize(pods, kruiseBinary?.path);
}
