// Runs one chaos scenario: a simulated cluster with the scenario's faults, the real `kwave run`
// binary (SIGKILLed and restarted, a second one from another PID namespace, one with a skewed
// clock), and the chaos the cluster gets meanwhile. Then the invariants, checked from the
// cluster (the simulator's store, what it saw change, and /sim/stats) — never from kwave's output.
import { spawn, type ChildProcess } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { decodeRecord } from '../../src/record/codec.js';
import { seededRandom } from '../../src/sim/clock.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import type { KubeObject } from '../../src/sim/store.js';
import { checkInvariants, type Observed } from './invariants.js';
import { planYaml, type Scenario } from './scenario.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/kwave.js');
const STATE = 'kwave.dev/in-place-state';
/** Debian's libfaketime (apt-get install faketime). */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const OWN_PIDNS = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
/** A scenario that has not ended by then is a violation (a hang), not a wait. */
const SCENARIO_DEADLINE_MS = 300_000;

export interface ScenarioResult {
  violations: string[];
  kills: number;
  /** Runs that stopped themselves with exit 4 (a lease they could not renew in time) and were run again. */
  interrupted: number;
  runs: number;
  exitCode: number | null;
  durationMs: number;
  /** The last runs' stderr, for a failing scenario's report. */
  logs: string;
}

interface Runner {
  child: ChildProcess;
  /** Started through `unshare --pid`: its identity names another PID namespace. */
  otherNamespace: boolean;
  /** Dead as far as a takeover is concerned: SIGKILLed or exited. */
  dead: boolean;
  exit: Promise<number | null>;
  stderr: string;
}

export async function runScenario(s: Scenario, options: { timeScale: number; canUnshare: boolean }): Promise<ScenarioResult> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'kwave-chaos-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const planFile = join(dir, 'plan.yaml');
  await writeFile(planFile, planYaml(s));
  const sim = await startSim({ pods: s.pods, seed: s.seed, timeScale: options.timeScale, kubeconfigOut: kubeconfig, faults: { ...s.faults, retryAfterSeconds: 1 } });
  const r = seededRandom(s.seed ^ 0x5bd1e995);
  const timers: NodeJS.Timeout[] = [];
  const runners: Runner[] = [];
  const violations: string[] = [];
  const observed = observe(sim, runners, violations);
  let kills = 0;
  let interrupted = 0;
  let exitCode: number | null = null;
  let logs = '';

  try {
    await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' });
    startChaos(s, sim, r, timers, observed);

    const deadline = started + SCENARIO_DEADLINE_MS;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const batch: Runner[] = [];
      if (attempt === 0 && s.twoRunners) {
        batch.push(startRunner(planFile, kubeconfig, { otherNamespace: false, skewSeconds: 0 }));
        batch.push(startRunner(planFile, kubeconfig, { otherNamespace: options.canUnshare, skewSeconds: s.skewSeconds }));
      } else {
        // Without a second runner, the skewed clock alternates with a true one across restarts.
        batch.push(startRunner(planFile, kubeconfig, { otherNamespace: false, skewSeconds: attempt % 2 === 0 ? s.skewSeconds : 0 }));
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
        new Promise<'hang'>((resolve) => timers.push(setTimeout(() => resolve('hang'), Math.max(0, deadline - Date.now())))),
      ]);
      logs = batch.map((b) => b.stderr.slice(-1500)).join('\n---\n');
      if (codes === 'hang') {
        violations.push(`kwave run did not end within ${SCENARIO_DEADLINE_MS / 1000}s (a hang)`);
        break;
      }
      // A kill that came after the run had ended for the cluster — its end recorded and the lease
      // released — only cut its exit short: that end is the scenario's.
      const final = codes.find((c) => c === 0 || c === 3) ?? (codes.includes(null) ? endedAndReleased(sim) : undefined);
      if (final !== undefined) {
        exitCode = final;
        // Both may end 0 or 3 only one after the other: the second (slow to start) took the lease
        // once the first had released it, and found the plan done. Never one taking it from the other.
        const handedOver = observed.holders.some((h, i) => h !== '' && (observed.holders[i + 1] ?? '') !== '');
        if (codes.filter((c) => c === 0 || c === 3).length > 1 && handedOver) violations.push(`two runners both ran the plan to its end, the lease going from one to the other (exit codes ${codes.join(', ')}; holders ${observed.holders.join(' → ')})`);
        break;
      }
      // Partial (exit 5): pods left untouched for a node that could not act. A user runs the plan
      // again once the node is back, and so does the harness.
      if (codes.includes(5)) {
        if (s.nodeFlap) sim.kubelet.setNodeReady(s.nodeFlap.node, true);
        await sleep(500);
        continue;
      }
      // Interrupted (exit 4): on a loaded machine a run may fail to renew its lease in time and
      // stop itself, leaving its pods resumable. A Job retries that (README), and so does the harness.
      if (codes.includes(4)) {
        interrupted++;
        await sleep(1000);
        continue;
      }
      const unexpected = codes.filter((c) => c !== null && c !== 2);
      if (unexpected.length > 0) {
        exitCode = unexpected[0]!;
        violations.push(`kwave run exited ${unexpected.join(', ')} (expected 0, 3, 5 while a node cannot act, 4 after a lost lease, or 2 while the plan is locked)`);
        break;
      }
      // Killed, or refused while another runner (or an abandoned lease) held the plan: run again.
      if (codes.includes(2)) await sleep(1000);
    }
    for (const t of timers) clearTimeout(t);
    observed.chaosOver = true;
    if (s.nodeFlap) sim.kubelet.setNodeReady(s.nodeFlap.node, true);
    const stats = (await (await fetch(`${sim.metricsUrl}/sim/stats`)).json()) as { maxNotReady: Record<string, number> };
    if (exitCode !== null) violations.push(...checkInvariants(s, sim, observed, stats, exitCode));
  } finally {
    for (const t of timers) clearTimeout(t);
    for (const run of runners) if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await Promise.all(runners.map((run) => run.exit));
    observed.stop();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
  return { violations, kills, interrupted, runs: runners.length, exitCode, durationMs: Date.now() - started, logs };
}

/** The exit code the record says the last run ended with (0 or 3), when the lease is free too. */
function endedAndReleased(sim: Sim): number | undefined {
  const lease = sim.store.get('leases', 'default', 'kwave-chaos');
  if ((lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity) return undefined;
  const cm = sim.store.get('configmaps', 'default', 'kwave-chaos') as unknown as V1ConfigMap | undefined;
  const decoded = cm ? decodeRecord(cm) : undefined;
  const code = decoded?.ok && decoded.record.endedAt !== undefined ? decoded.record.exitCode : undefined;
  return code === 0 || code === 3 ? code : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function startRunner(planFile: string, kubeconfig: string, how: { otherNamespace: boolean; skewSeconds: number }): Runner {
  const kwave = [process.execPath, BIN, 'run', planFile, '--kubeconfig', kubeconfig, '--metrics-address', 'off', '-o', 'json'];
  const ns = how.otherNamespace ? ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child=SIGKILL'] : [];
  const argv = [...ns, ...kwave];
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', KUBECONFIG: '' };
  if (how.skewSeconds !== 0) {
    // libfaketime preloaded into kwave itself (the `faketime` wrapper would stand between our
    // SIGKILL and kwave); it shifts the wall clock only, timers keep real time.
    Object.assign(env, { LD_PRELOAD: LIBFAKETIME, FAKETIME: `${how.skewSeconds > 0 ? '+' : ''}${how.skewSeconds}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1' });
  }
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const runner: Runner = { child, otherNamespace: how.otherNamespace, dead: false, stderr: '', exit: Promise.resolve(null) };
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    runner.stderr = (runner.stderr + c).slice(-20_000);
    if (process.env.KWAVE_CHAOS_DEBUG) process.stderr.write(`[${child.pid}${how.otherNamespace ? ' other-ns' : ''}${how.skewSeconds ? ` skew ${how.skewSeconds}s` : ''}] ${c}`);
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
function startChaos(s: Scenario, sim: Sim, r: () => number, timers: NodeJS.Timeout[], observed: Observed): void {
  const selected = () => sim.store.list('pods', 'default').filter((p) => (p.metadata.labels as Record<string, string> | undefined)?.app === 'demo');
  if (s.writerEveryMs > 0) {
    let n = 0;
    const touch = () => {
      const pods = selected();
      const pod = pods[Math.floor(r() * pods.length)];
      if (pod) {
        const copy = structuredClone(pod) as KubeObject & { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } };
        // Another controller's bookkeeping: never the selector's label, never kwave's annotation.
        if (r() < 0.5) copy.metadata.labels = { ...copy.metadata.labels, 'chaos.example/touch': String(++n) };
        else copy.metadata.annotations = { ...copy.metadata.annotations, 'chaos.example/note': `n${++n}` };
        try {
          sim.store.update('pods', copy, pod.metadata.resourceVersion);
          observed.writes++;
        } catch {
          // The pod changed or went meanwhile: the writer just tries another next time.
        }
      }
      timers.push(setTimeout(touch, s.writerEveryMs));
    };
    timers.push(setTimeout(touch, s.writerEveryMs));
  }
  for (const at of s.deletions) {
    timers.push(
      setTimeout(() => {
        // Prefer a pod mid-flight (its gate closed): the case kwave must report as vanished.
        const pods = selected();
        const inFlight = pods.filter((p) => gateOf(p) === 'False');
        const victim = (inFlight.length ? inFlight : pods)[Math.floor(r() * (inFlight.length || pods.length))];
        if (!victim) return;
        observed.deleted.add(victim.metadata.name);
        void fetch(`${sim.metricsUrl}/sim/pods/default/${victim.metadata.name}/delete?gracePeriodSeconds=0`, { method: 'POST' });
      }, at),
    );
  }
  if (s.nodeFlap) {
    const { node, atMs, forMs } = s.nodeFlap;
    timers.push(setTimeout(() => sim.kubelet.setNodeReady(node, false), atMs));
    timers.push(setTimeout(() => sim.kubelet.setNodeReady(node, true), atMs + forMs));
  }
}

export function gateOf(pod: KubeObject): string | undefined {
  const conditions = (pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === 'kwave.dev/in-place-ready')?.status;
}

/** What the cluster goes through, from the store's own change feed. */
function observe(sim: Sim, runners: Runner[], violations: string[]): Observed {
  const initial = new Map<string, { imageID: string; restartCount: number }>();
  for (const pod of sim.store.list('pods', 'default')) {
    const cs = containerStatus(pod);
    initial.set(pod.metadata.name, { imageID: cs?.imageID ?? '', restartCount: cs?.restartCount ?? 0 });
  }
  const annotations = new Map<string, Set<string>>();
  const specImages = new Map<string, string[]>();
  let holder = '';
  const observed: Observed = {
    initial,
    annotations,
    specImages,
    deleted: new Set(),
    writes: 0,
    holders: [],
    chaosOver: false,
    stop: () => undefined,
  };
  observed.stop = sim.store.subscribe((change) => {
    if (change.resource === 'pods' && change.object.metadata.namespace === 'default' && change.type !== 'DELETED') {
      const name = change.object.metadata.name;
      const state = (change.object.metadata.annotations as Record<string, string> | undefined)?.[STATE];
      if (state !== undefined) {
        const set = annotations.get(name) ?? new Set<string>();
        set.add(state);
        annotations.set(name, set);
      }
      const image = (change.object.spec as { containers: { name: string; image: string }[] }).containers.find((c) => c.name === 'nginx')?.image ?? '';
      const seen = specImages.get(name) ?? [];
      if (seen[seen.length - 1] !== image) seen.push(image);
      specImages.set(name, seen);
    }
    if (change.resource === 'leases' && change.object.metadata.name === 'kwave-chaos') {
      const next = change.type === 'DELETED' ? '' : ((change.object.spec as { holderIdentity?: string }).holderIdentity ?? '');
      if (next !== holder) {
        observed.holders.push(next);
        // A takeover while the previous holder still runs would be two active runners.
        if (holder !== '' && next !== '') {
          const previous = runnerOf(holder, runners);
          if (previous && !previous.dead) violations.push(`the lease passed from "${holder}" to "${next}" while the first was still running`);
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

export function containerStatus(pod: KubeObject): { imageID: string; restartCount: number; image: string } | undefined {
  return (pod.status as { containerStatuses?: { name: string; imageID: string; restartCount: number; image: string }[] } | undefined)?.containerStatuses?.find((c) => c.name === 'nginx');
}
