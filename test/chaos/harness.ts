// Runs one chaos scenario: a cluster (the embedded simulator, or a fresh real control plane) with
// the scenario's faults, the real `kwave run` binary (SIGKILLed and restarted, a second one from
// another PID namespace, one with a skewed clock), and the chaos the cluster gets meanwhile. Then
// the invariants, checked from the cluster (its pods, record, Lease, what its change feed saw,
// its not-Ready count and, on real, the audit log) — never from kwave's output.
import { spawn, type ChildProcess } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { decodeRecord } from '../../src/record/codec.js';
import { seededRandom } from '../../src/sim/clock.js';
import {
  containerStatus,
  gateOf,
  holderOf,
  isSelected,
  nodeCannotAct,
  RECORD_NAME,
  specImage,
  type BackendFaultReport,
  type ChaosCluster,
} from './cluster.js';
import { startEmbeddedCluster } from './embeddedCluster.js';
import { newDrainTracker, trackDrain } from './drains.js';
import { checkInvariants, type Observed } from './invariants.js';
import { startRealCluster } from './realCluster.js';
import { startPodFaults, startTimedFaults } from './podFaults.js';
import { planYaml, type Scenario } from './scenario.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/kwave.js');
const STATE = 'kwave.dev/in-place-state';
/** Debian's libfaketime (apt-get install faketime). */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const OWN_PIDNS = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
/** A scenario that has not ended by then is a violation (a hang), not a wait (KWAVE_CHAOS_DEADLINE_MS shortens it for a replay). */
const SCENARIO_DEADLINE_MS = Number(process.env.KWAVE_CHAOS_DEADLINE_MS ?? 300_000);

export interface ScenarioResult {
  violations: string[];
  kills: number;
  runs: number;
  exitCode: number | null;
  durationMs: number;
  /** Starting the cluster (and seeding its world) took this long. */
  startupMs: number;
  /** Runs that stopped themselves with exit 4 (a lease they lost) and were run again. */
  interrupted: number;
  faults: BackendFaultReport;
  /** Nodes the change feed saw NotReady or tainted (by the node fault or by the controller after an outage). */
  nodesTainted: number;
  /** The pod faults that took place: evictions accepted, containers crashed, nodes deleted. */
  landed: { evictions: number; crashes: number; nodeDeletions: number };
  /** The last runs' stderr and every run's last events, for a failing scenario's report. */
  logs: string;
}

/** Events of a scenario's runs a failing report shows (the last of them). */
const EVENTS_SHOWN = 60;

interface Runner {
  child: ChildProcess;
  /** Started through `unshare --pid`: its identity names another PID namespace. */
  otherNamespace: boolean;
  /** Dead as far as a takeover is concerned: SIGKILLed or exited. */
  dead: boolean;
  exit: Promise<number | null>;
  stderr: string;
  /** Its events, one short line each (`kwave run -o json` on stdout), the last EVENTS_SHOWN. */
  events: string[];
}

/** One line of kwave's `-o json` output, short: time, pid, event, pod, and what it says. */
function eventLine(pid: number | undefined, json: string): string {
  try {
    const e = JSON.parse(json) as Record<string, unknown>;
    const said = [e.step, e.result, e.reason, e.phase, e.scope].filter((v) => typeof v === 'string').join(' ');
    const message = typeof e.message === 'string' && !e.step ? ` ${e.message.slice(0, 140)}` : '';
    return `${String(e.time).slice(11, 23)} ${pid} ${String(e.event)}${e.pod ? ` ${String(e.pod)}` : ''}${said ? ` ${said}` : ''}${message}`;
  } catch {
    return `${pid} ${json.slice(0, 160)}`;
  }
}

export async function runScenario(
  s: Scenario,
  options: { timeScale: number; canUnshare: boolean },
): Promise<ScenarioResult> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'kwave-chaos-'));
  const planFile = join(dir, 'plan.yaml');
  await writeFile(planFile, planYaml(s));
  const startupStarted = Date.now();
  const cluster =
    s.backend === 'real'
      ? await startRealCluster(s, dir, options.timeScale)
      : await startEmbeddedCluster(s, dir, options.timeScale);
  const startupMs = Date.now() - startupStarted;
  const kubeconfig = cluster.kubeconfigPath;
  const r = seededRandom(s.seed ^ 0x5bd1e995);
  const timers: NodeJS.Timeout[] = [];
  const runners: Runner[] = [];
  const violations: string[] = [];
  let kills = 0;
  let interrupted = 0;
  let exitCode: number | null = null;
  let logs = '';
  let observed: Observed | undefined;
  let stopPodFaults = () => {};

  try {
    observed = await observe(cluster, runners, violations);
    await cluster.resetStats();
    startChaos(s, cluster, r, timers, observed);
    stopPodFaults = startPodFaults(s, cluster, observed, [...observed.drains.last.values()], timers);
    if (s.admissionRefusal) {
      const names = [...observed.initial.keys()].sort();
      observed.refusedPod = names[s.admissionRefusal.podIndex % names.length];
      if (!cluster.refusePatch) observed.problems.push('admission refusal: this backend has no admission rules');
      else if (observed.refusedPod) cluster.refusePatch(observed.refusedPod, s.admissionRefusal.code);
    }
    // The backend's faults, the node deletion and the slow watch land mid-wave: timed from
    // kwave's first image patch the cluster saw.
    const seen = observed;
    observed.onFirstPatch = () => {
      const backendFaultsOver = cluster.startBackendFaults(s, timers);
      startTimedFaults(s, cluster, seen, timers, backendFaultsOver);
    };

    // From the moment the cluster serves: its start-up (long on a loaded machine) is not kwave's time.
    const deadline = Date.now() + SCENARIO_DEADLINE_MS;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const batch: Runner[] = [];
      cluster.runnersStarting(attempt === 0 && s.twoRunners ? 2 : 1);
      const holdersBefore = observed.holders.length;
      if (attempt === 0 && s.twoRunners) {
        batch.push(startRunner(planFile, kubeconfig, { otherNamespace: false, skewSeconds: 0 }));
        batch.push(
          startRunner(planFile, kubeconfig, { otherNamespace: options.canUnshare, skewSeconds: s.skewSeconds }),
        );
      } else {
        // Without a second runner, the skewed clock alternates with a true one across restarts.
        batch.push(
          startRunner(planFile, kubeconfig, {
            otherNamespace: false,
            skewSeconds: attempt % 2 === 0 ? s.skewSeconds : 0,
          }),
        );
      }
      runners.push(...batch);
      const killAt = s.kills[attempt];
      if (killAt !== undefined) {
        // Only ever the runner in our PID namespace: killing `unshare` would orphan its child.
        const victim = batch[0]!;
        timers.push(
          setTimeout(() => {
            if (victim.child.exitCode === null && victim.child.signalCode === null) {
              victim.dead = true;
              victim.child.kill('SIGKILL');
              kills++;
            }
          }, killAt),
        );
      }
      const codes = await Promise.race([
        Promise.all(batch.map((b) => b.exit)),
        new Promise<'hang'>((resolve) =>
          timers.push(setTimeout(() => resolve('hang'), Math.max(0, deadline - Date.now()))),
        ),
      ]);
      const events = runners
        .flatMap((b) => b.events)
        .sort((a, b) => a.slice(0, 12).localeCompare(b.slice(0, 12)))
        .slice(-EVENTS_SHOWN);
      logs = [
        batch.map((b) => b.stderr.slice(-1500)).join('\n---\n'),
        `--- events of every run (the last ${EVENTS_SHOWN}):`,
        ...events,
      ].join('\n');
      if (codes !== 'hang') observed.exits.push(...codes);
      cluster.runnersRan(new Set(observed.holders.slice(holdersBefore).filter(Boolean)).size);
      if (codes === 'hang') {
        violations.push(`kwave run did not end within ${SCENARIO_DEADLINE_MS / 1000}s (a hang)`);
        break;
      }
      // A runner killed while it held the lease (a slow second runner that took it once the other
      // had ended, say) leaves it held: a Job would run it again, and so does the harness.
      if (codes.includes(null) && holderOf(await cluster.lease()) !== undefined) {
        await sleep(500);
        continue;
      }
      // A kill that came after the run had ended for the cluster — its end recorded and the lease
      // released — only cut its exit short: that end is the scenario's.
      const final =
        codes.find((c) => c === 0 || c === 3) ?? (codes.includes(null) ? await endedAndReleased(cluster) : undefined);
      if (final !== undefined) {
        exitCode = final;
        // Both may end 0 or 3 only one after the other: the second (slow to start) took the lease
        // once the first had released it, and found the plan done. Never one taking it from the other.
        const { holders } = observed;
        const handedOver = holders.some((h, i) => h !== '' && (holders[i + 1] ?? '') !== '');
        if (codes.filter((c) => c === 0 || c === 3).length > 1 && handedOver)
          violations.push(
            `two runners both ran the plan to its end, the lease going from one to the other (exit codes ${codes.join(', ')}; holders ${observed.holders.join(' → ')})`,
          );
        // Halted with rollbacks left for nodes that could not act (the record names them): as the
        // halt message tells a user, `kwave rollback` once the nodes are back. On real, an outage
        // of the apiserver or etcd longer than the node grace period takes every node down for a while.
        if (final === 3 && (await rollbackPending(cluster))) {
          const code = await rollBackOnceNodesAct(planFile, kubeconfig, observed, runners, deadline);
          if (code !== 0) violations.push(`kwave rollback after the nodes came back exited ${code}`);
        }
        break;
      }
      // Partial (exit 5): pods left untouched for a node that could not act. A user runs the plan
      // again once the node is back, and so does the harness.
      if (codes.includes(5)) {
        if (s.nodeFlap) await cluster.setNodeReady(s.nodeFlap.node, true);
        await untilNodesCanAct(observed, deadline);
        await sleep(500);
        continue;
      }
      // Stopped (exit 4) without a signal of ours: kwave lost its Lease (the other runner took it
      // over while this one's renewals went unanswered) and wrote nothing more, leaving its pods
      // resumable. A Job would run it again.
      interrupted += codes.filter((c) => c === 4).length;
      const unexpected = codes.filter((c) => c !== null && c !== 2 && c !== 4);
      if (unexpected.length > 0) {
        exitCode = unexpected[0]!;
        violations.push(
          `kwave run exited ${unexpected.join(', ')} (expected 0, 3, 5 while a node cannot act, 4 after a lost lease, or 2 while the plan is locked)`,
        );
        break;
      }
      // Killed, stopped, or refused while another runner (or an abandoned lease) held the plan: run again.
      if (codes.includes(2) || codes.includes(4)) await sleep(1000);
    }
    for (const t of timers) clearTimeout(t);
    observed.chaosOver = true;
    if (s.nodeFlap) await cluster.setNodeReady(s.nodeFlap.node, true);
    const state = await cluster.final();
    // Checked whatever the end: no run ending the plan before the deadline is itself a violation.
    violations.push(...checkInvariants(s, state, observed, exitCode));
  } finally {
    for (const t of timers) clearTimeout(t);
    for (const run of runners) if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await Promise.all(runners.map((run) => run.exit));
    observed?.stop();
    stopPodFaults();
    await cluster.close();
    await rm(dir, { recursive: true, force: true });
  }
  const faults = cluster.faultReport();
  violations.push(
    ...[...faults.problems, ...(observed?.problems ?? [])].map((p) => `a fault did not take place: ${p}`),
  );
  return {
    violations,
    kills,
    interrupted,
    runs: runners.length,
    exitCode,
    durationMs: Date.now() - started,
    startupMs,
    faults,
    nodesTainted: observed?.nodesThatCouldNotAct.size ?? 0,
    landed: {
      evictions: observed?.evicted.size ?? 0,
      crashes: [...(observed?.crashes.values() ?? [])].reduce((a, b) => a + b, 0),
      nodeDeletions: observed?.nodesDeleted.size ?? 0,
    },
    logs,
  };
}

/** The record of the halted run lists pods whose rollback waits for their node. */
async function rollbackPending(cluster: ChaosCluster): Promise<boolean> {
  const cm = (await cluster.record()) as unknown as V1ConfigMap | undefined;
  const decoded = cm ? decodeRecord(cm) : undefined;
  return decoded?.ok === true && (decoded.record.waitingForNodes?.length ?? 0) > 0;
}

/** `kwave rollback PLAN` until it ends (0) or gives up; 5 (a node down again) and 2 (locked) run it again. */
async function rollBackOnceNodesAct(
  planFile: string,
  kubeconfig: string,
  observed: Observed,
  runners: Runner[],
  deadline: number,
): Promise<number | null> {
  for (;;) {
    await untilNodesCanAct(observed, deadline);
    const runner = startRunner(planFile, kubeconfig, { otherNamespace: false, skewSeconds: 0, command: 'rollback' });
    runners.push(runner);
    const code = await runner.exit;
    if ((code !== 5 && code !== 2) || Date.now() > deadline) return code;
    await sleep(1000);
  }
}

/**
 * Resolves once no node is seen unable to act (the node-lifecycle controller lifted its taints)
 * and no selected pod is left on a deleted node (the pod GC removed them), or at the deadline.
 */
async function untilNodesCanAct(observed: Observed, deadline: number): Promise<void> {
  const onDeletedNode = () =>
    [...observed.drains.last.values()].some((p) =>
      observed.nodesDeleted.has((p.spec as { nodeName?: string } | undefined)?.nodeName ?? ''),
    );
  while ((observed.nodesDown.size > 0 || onDeletedNode()) && Date.now() < deadline) await sleep(250);
}

/** The exit code the record says the last run ended with (0 or 3), when the lease is free too. */
async function endedAndReleased(cluster: ChaosCluster): Promise<number | undefined> {
  if (holderOf(await cluster.lease())) return undefined;
  const cm = (await cluster.record()) as unknown as V1ConfigMap | undefined;
  const decoded = cm ? decodeRecord(cm) : undefined;
  const code = decoded?.ok && decoded.record.endedAt !== undefined ? decoded.record.exitCode : undefined;
  return code === 0 || code === 3 ? code : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function startRunner(
  planFile: string,
  kubeconfig: string,
  how: { otherNamespace: boolean; skewSeconds: number; command?: 'run' | 'rollback' },
): Runner {
  const kwave = [
    process.execPath,
    BIN,
    how.command ?? 'run',
    planFile,
    '--kubeconfig',
    kubeconfig,
    '--metrics-address',
    'off',
    '-o',
    'json',
  ];
  const ns = how.otherNamespace ? ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL'] : [];
  const argv = [...ns, ...kwave];
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    KUBECONFIG: '',
  };
  if (how.skewSeconds !== 0) {
    // libfaketime preloaded into kwave itself (the `faketime` wrapper would stand between our
    // SIGKILL and kwave); it shifts the wall clock only, timers keep real time.
    Object.assign(env, {
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME: `${how.skewSeconds > 0 ? '+' : ''}${how.skewSeconds}s`,
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    });
  }
  const debug = process.env.KWAVE_CHAOS_DEBUG;
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const runner: Runner = {
    child,
    otherNamespace: how.otherNamespace,
    dead: false,
    stderr: '',
    events: [],
    exit: Promise.resolve(null),
  };
  // kwave's own events, for a failing scenario's report (and all of them with KWAVE_CHAOS_DEBUG);
  // never used by the invariants.
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    const lines = (partial + c).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines.filter(Boolean)) {
      if (debug) process.stderr.write(`[${child.pid} out] ${l}\n`);
      runner.events.push(eventLine(child.pid, l));
    }
    if (runner.events.length > 2 * EVENTS_SHOWN) runner.events.splice(0, runner.events.length - EVENTS_SHOWN);
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    runner.stderr = (runner.stderr + c).slice(-20_000);
    if (process.env.KWAVE_CHAOS_DEBUG)
      process.stderr.write(
        `[${child.pid}${how.otherNamespace ? ' other-ns' : ''}${how.skewSeconds ? ` skew ${how.skewSeconds}s` : ''}] ${c}`,
      );
  });
  runner.exit = new Promise((resolve) =>
    child.on('close', (code) => {
      runner.dead = true;
      resolve(code);
    }),
  );
  return runner;
}

/** The concurrent writer, the deletions and the node flap, on timers from now. */
function startChaos(
  s: Scenario,
  cluster: ChaosCluster,
  r: () => number,
  timers: NodeJS.Timeout[],
  observed: Observed,
): void {
  if (s.writerEveryMs > 0) {
    let n = 0;
    const touch = async () => {
      const pods = await cluster.selectedPods().catch(() => []);
      const pod = pods[Math.floor(r() * pods.length)];
      // Another controller's bookkeeping: never the selector's label, never kwave's annotation.
      const change =
        r() < 0.5
          ? { labels: { 'chaos.example/touch': String(++n) } }
          : { annotations: { 'chaos.example/note': `n${++n}` } };
      if (pod && !observed.chaosOver && (await cluster.touchPod(pod, change))) observed.writes++;
      if (!observed.chaosOver) timers.push(setTimeout(() => void touch(), s.writerEveryMs));
    };
    timers.push(setTimeout(() => void touch(), s.writerEveryMs));
  }
  for (const at of s.deletions) {
    timers.push(
      setTimeout(() => {
        void (async () => {
          // Prefer a pod mid-flight (its gate closed): the case kwave must report as vanished.
          const pods = await cluster.selectedPods().catch(() => []);
          const inFlight = pods.filter((p) => gateOf(p) === 'False');
          const victim = (inFlight.length ? inFlight : pods)[Math.floor(r() * (inFlight.length || pods.length))];
          if (!victim || observed.chaosOver) return;
          observed.deleted.add(victim.metadata.name);
          await cluster.deletePod(victim.metadata.name);
        })();
      }, at),
    );
  }
  if (s.nodeFlap) {
    const { node, atMs, forMs } = s.nodeFlap;
    const set = (ready: boolean) => () =>
      void cluster
        .setNodeReady(node, ready)
        .catch((err: unknown) =>
          observed.problems.push(`node ${node} ${ready ? 'back' : 'silent'}: ${(err as Error).message}`),
        );
    timers.push(setTimeout(set(false), atMs));
    timers.push(setTimeout(set(true), atMs + forMs));
  }
}

/** What the cluster goes through, from its change feed (the store's, or the harness's own watches of the API). */
async function observe(cluster: ChaosCluster, runners: Runner[], violations: string[]): Promise<Observed> {
  const initial = new Map<string, { imageID: string; restartCount: number }>();
  const drains = newDrainTracker();
  for (const pod of await cluster.selectedPods()) {
    drains.last.set(pod.metadata.name, pod);
    const cs = containerStatus(pod);
    initial.set(pod.metadata.name, { imageID: cs?.imageID ?? '', restartCount: cs?.restartCount ?? 0 });
  }
  const annotations = new Map<string, Set<string>>();
  const specImages = new Map<string, string[]>();
  let holder = holderOf(await cluster.lease());
  const observed: Observed = {
    initial,
    annotations,
    specImages,
    deleted: new Set(),
    writes: 0,
    holders: [],
    nodesDown: new Set(),
    nodesThatCouldNotAct: new Set(),
    drains,
    exits: [],
    evicted: new Set(),
    crashes: new Map(),
    nodesDeleted: new Set(),
    patchedWhileTerminating: [],
    problems: [],
    chaosOver: false,
    stop: () => undefined,
  };
  observed.stop = cluster.subscribe((change) => {
    if (change.resource === 'pods' && isSelected(change.object)) {
      trackDrain(drains, change.type, change.object);
      // Whoever deleted it: the harness, an eviction, the pod GC after its node went.
      if (change.type === 'DELETED') observed.deleted.add(change.object.metadata.name);
    }
    if (change.resource === 'pods' && change.type !== 'DELETED') {
      const name = change.object.metadata.name;
      const state = (change.object.metadata.annotations as Record<string, string> | undefined)?.[STATE];
      if (state !== undefined) {
        if (annotations.size === 0) observed.onFirstPatch?.();
        const set = annotations.get(name) ?? new Set<string>();
        set.add(state);
        annotations.set(name, set);
      }
      const image = specImage(change.object);
      const seen = specImages.get(name) ?? [];
      if (seen[seen.length - 1] !== image) seen.push(image);
      specImages.set(name, seen);
    }
    if (change.resource === 'nodes') {
      const name = change.object.metadata.name;
      if (change.type !== 'DELETED' && nodeCannotAct(change.object)) {
        observed.nodesDown.add(name);
        observed.nodesThatCouldNotAct.add(name);
      } else observed.nodesDown.delete(name);
    }
    if (change.resource === 'leases' && change.object.metadata.name === RECORD_NAME) {
      const next = change.type === 'DELETED' ? '' : holderOf(change.object);
      if (next !== holder) {
        observed.holders.push(next);
        // A takeover while the previous holder still runs would be two active runners.
        if (holder !== '' && next !== '') {
          const previous = runnerOf(holder, runners);
          if (previous && !previous.dead)
            violations.push(`the lease passed from "${holder}" to "${next}" while the first was still running`);
        }
        holder = next;
      }
    }
  });
  return observed;
}

function runnerOf(identity: string, runners: Runner[]): Runner | undefined {
  const m = / pid (\d+)(?: pidns (\d+))?/.exec(identity);
  if (!m) return undefined;
  if (m[2] !== undefined && m[2] !== OWN_PIDNS) return runners.filter((r) => r.otherNamespace).at(-1);
  return runners.find((r) => !r.otherNamespace && r.child.pid === Number(m[1]));
}
