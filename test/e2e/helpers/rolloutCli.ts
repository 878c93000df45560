// The real `kwave` binary (`node bin/kwave.js`, built by `npm run build`) against a simulated
// cluster started in the test process: plans written to a temp dir, `kwave run` spawned with
// `-o json` (one event per line, parsed as it arrives), and what the tests read back from the
// cluster (pods and Events through the API server, /sim/stats, the rollout record through
// `kwave status -o json`).
//
// Every child is spawned asynchronously: the simulator lives in this process's event loop, so a
// synchronous spawn would freeze the cluster the child talks to.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import { startTestSim, type TestSim } from './backend.js';
import type { StatsSnapshot } from '../../../src/sim/stats.js';
import type { KubeObject } from '../../../src/sim/store.js';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { clusterReader } from './clusterRead.js';
import { BIN, CHILD_LIMITS, KWAVE_TIMEOUT_MS, ROOT } from './kwaveBin.js';
import { planYaml as plainPlanYaml, type PlanOptions } from './plans.js';

export type { PlanOptions };
/** The simulator's seeded PRNG, so "random" kill moments are the same on every run. */
export { seededRandom } from '../../../src/sim/clock.js';

export const GATE = 'kwave.dev/in-place-ready';
const STATE_ANNOTATION = 'kwave.dev/in-place-state';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Exit {
  /** The exit code; null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A `kwave run` (or `rollback`) in flight: its events as they arrive and its end. */
export interface RunningKwave {
  child: ChildProcess;
  pid: number;
  events: RolloutEvent[];
  stdout(): string;
  stderr(): string;
  /** Resolves with the first event (already seen or to come) that `match` accepts. */
  waitFor(match: (e: RolloutEvent) => boolean, what: string, timeoutMs?: number): Promise<RolloutEvent>;
  exited: Promise<Exit>;
}

/**
 * How long a test waits for an event before it fails. A bound, not a sleep: a run that works
 * sends it in well under a second on an idle machine, and on the shared 2-core box under load
 * (load averages of 30 were seen) in tens of seconds; 3 minutes keeps a wide margin over both.
 */
const EVENT_BOUND_MS = 180_000;

/** The strategy and failure policy the rollout suites share unless a test says otherwise. */
const ROLLOUT_PLAN = {
  waves: '[1, "10%", "50%", "100%"]',
  concurrency: 5,
  maxUnavailable: 5,
  order: 'name',
  drainSeconds: 0,
  podTimeout: '30s',
  maxFailed: 0,
  rollback: 'failed',
} satisfies Partial<PlanOptions>;

/** A RolloutPlan's YAML: plans.ts's, with the rollout suites' strategy as the default. */
export function planYaml(o: PlanOptions): string {
  return plainPlanYaml({ ...ROLLOUT_PLAN, ...o });
}

/** What a test reads of one pod's first container `nginx` and of its conditions. */
export interface PodView {
  name: string;
  node: string;
  image: string;
  specImage: string;
  imageID: string;
  containerID: string;
  restartCount: number;
  ready: boolean;
  /** The kwave gate condition's status, or undefined when absent. */
  gate: string | undefined;
  annotation: string | undefined;
}

interface RawPod {
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status: {
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; image: string; imageID: string; containerID?: string; restartCount: number }[];
  };
}

export function viewPod(obj: KubeObject | V1Pod): PodView {
  const pod = obj as unknown as RawPod;
  const cs = pod.status.containerStatuses?.find((c) => c.name === 'nginx');
  const cond = (type: string) => pod.status.conditions?.find((c) => c.type === type)?.status;
  return {
    name: pod.metadata.name,
    node: pod.spec.nodeName ?? '',
    image: cs?.image ?? '',
    specImage: pod.spec.containers.find((c) => c.name === 'nginx')?.image ?? '',
    imageID: cs?.imageID ?? '',
    containerID: cs?.containerID ?? '',
    restartCount: cs?.restartCount ?? -1,
    ready: cond('Ready') === 'True',
    gate: cond(GATE),
    annotation: pod.metadata.annotations?.[STATE_ANNOTATION],
  };
}

export interface Fleet {
  /** The cluster, on the backend KWAVE_TEST_BACKEND selects. */
  sim: TestSim;
  dir: string;
  kubeconfig: string;
  stats(): Promise<StatsSnapshot>;
  resetStats(): Promise<StatsSnapshot>;
  /** POSTs to the simulator's admin port, e.g. `/sim/nodes/n4/not-ready`. */
  admin(path: string): Promise<void>;
  /** The pods of `namespace` labelled app=`app`, read from the API server now, by name. */
  pods(app?: string, namespace?: string): Promise<Map<string, PodView>>;
  /** The Events of `namespace` about pod `name` (all when no name), read from the API server. */
  events(namespace?: string, name?: string): Promise<CoreV1Event[]>;
  writePlan(file: string, yaml: string): Promise<string>;
  /** Spawns `kwave ARGS --kubeconfig K --metrics-address off -o json`. */
  start(args: string[]): RunningKwave;
  /** Runs `kwave ARGS --kubeconfig K` to its end. */
  kwave(args: string[]): Promise<CliResult>;
  /** The rollout record as `kwave status PLAN -o json` prints it. */
  status(planFile: string): Promise<Record<string, unknown> & { phase: string }>;
  /** Kills what is still running, closes the simulator, removes the temp dir. */
  close(): Promise<void>;
}

export async function startFleet(
  options: { fixture?: string; pods?: number; timeScale?: number } = {},
): Promise<Fleet> {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-rollout-e2e-'));
  const kubeconfig = join(dir, 'kubeconfig');
  let fixture: string | undefined;
  if (options.fixture) {
    fixture = join(dir, 'fixture.yaml');
    await writeFile(fixture, options.fixture);
  }
  const sim = await startTestSim({
    ...(fixture ? { fixture } : { pods: options.pods ?? 20 }),
    timeScale: options.timeScale ?? 0.3,
    kubeconfigOut: kubeconfig,
  });
  const reader = clusterReader(kubeconfig);
  const children = kwaveChildren(kubeconfig);
  const { kwave } = children;

  const stats = async () => (await (await fetch(`${sim.metricsUrl}/sim/stats`)).json()) as StatsSnapshot;

  return {
    sim,
    dir,
    kubeconfig,
    stats,
    resetStats: async () =>
      (await (await fetch(`${sim.metricsUrl}/sim/stats/reset`, { method: 'POST' })).json()) as StatsSnapshot,
    admin: async (path) => {
      const res = await fetch(`${sim.metricsUrl}${path}`, { method: 'POST' });
      if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    },
    pods: async (app = 'demo', namespace = 'default') => {
      const out = new Map<string, PodView>();
      for (const p of await reader.pods(namespace, `app=${app}`)) out.set(p.metadata!.name!, viewPod(p));
      return out;
    },
    events: (namespace = 'default', name) => reader.events(namespace, name),
    writePlan: planWriter(dir),
    start: children.start,
    kwave,
    status: async (planFile) => {
      const r = await kwave(['status', planFile, '-o', 'json']);
      if (r.code !== 0) throw new Error(`kwave status exited ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout) as Record<string, unknown> & { phase: string };
    },
    close: async () => {
      children.killAll();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `writePlan(file, yaml)`: writes the plan into `dir`, resolves to its path. */
export function planWriter(dir: string): (file: string, yaml: string) => Promise<string> {
  return async (file, yaml) => {
    const path = join(dir, file);
    await writeFile(path, yaml);
    return path;
  };
}

/**
 * The kwave processes of a suite, against `kubeconfig`: `start` spawns one with
 * `--metrics-address off -o json` and follows its events, `kwave` runs one to its end;
 * `killAll` ends whatever is still running (a suite's close()).
 */
export function kwaveChildren(kubeconfig: string): {
  start(args: string[]): RunningKwave;
  kwave(args: string[]): Promise<CliResult>;
  killAll(): void;
} {
  const children = new Set<ChildProcess>();
  const common = ['--kubeconfig', kubeconfig];
  // KUBECONFIG cleared so nothing of the machine's own config can leak in.
  const env = { ...process.env, KUBECONFIG: '' };
  return {
    start: (args) => {
      const child = spawn(process.execPath, [BIN, ...args, ...common, '--metrics-address', 'off', '-o', 'json'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...CHILD_LIMITS,
      });
      children.add(child);
      return follow(child, () => children.delete(child));
    },
    kwave: (args) =>
      new Promise((resolve, reject) => {
        const child = execFile(
          process.execPath,
          [BIN, ...args, ...common],
          { cwd: ROOT, env, ...CHILD_LIMITS },
          (err, stdout, stderr) => {
            children.delete(child);
            if (err && typeof err.code !== 'number') return reject(err);
            resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
          },
        );
        children.add(child);
      }),
    killAll: () => {
      for (const c of children) c.kill('SIGKILL');
    },
  };
}

/** Parses a child's JSON lines as they come and tells waiters about each event. */
export function follow(child: ChildProcess, onExit: () => void): RunningKwave {
  const events: RolloutEvent[] = [];
  let out = '';
  let err = '';
  let partial = '';
  let listeners: (() => void)[] = [];
  const notify = () => {
    for (const l of listeners) l();
  };
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    out += chunk;
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      try {
        events.push(JSON.parse(line) as RolloutEvent);
      } catch {
        // Not an event (a stray line): kept in stdout() for the assertion messages.
      }
    }
    notify();
  });
  child.stderr!.on('data', (chunk: string) => (err += chunk));
  let ended = false;
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      ended = true;
      onExit();
      notify();
      resolve({ code, signal });
    });
  });
  const waitFor = (match: (e: RolloutEvent) => boolean, what: string, timeoutMs = EVENT_BOUND_MS) =>
    new Promise<RolloutEvent>((resolve, reject) => {
      const settle = (): boolean => {
        const hit = events.find(match);
        if (hit) resolve(hit);
        else if (ended) reject(new Error(`kwave ended before ${what}\nstdout:\n${out.slice(-3000)}\nstderr:\n${err}`));
        return hit !== undefined || ended;
      };
      if (settle()) return;
      const listener = () => {
        if (settle()) cleanup();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${what}\nstdout:\n${out.slice(-3000)}\nstderr:\n${err}`));
      }, timeoutMs);
      const cleanup = () => {
        listeners = listeners.filter((l) => l !== listener);
        clearTimeout(timer);
      };
      listeners.push(listener);
    });
  return { child, pid: child.pid!, events, stdout: () => out, stderr: () => err, waitFor, exited };
}

/** The `rollout-end` event of a finished run (fails with the output when there is none). */
export function endOf(run: RunningKwave): Extract<RolloutEvent, { event: 'rollout-end' }> {
  const end = run.events.find((e) => e.event === 'rollout-end');
  if (!end || end.event !== 'rollout-end')
    throw new Error(`no rollout-end event\nstdout:\n${run.stdout().slice(-3000)}\nstderr:\n${run.stderr()}`);
  return end;
}

/** Fails instead of hanging when a run never ends. */
export async function exitOf(run: RunningKwave, timeoutMs = KWAVE_TIMEOUT_MS): Promise<Exit> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `kwave did not exit within ${timeoutMs} ms\nstdout:\n${run.stdout().slice(-3000)}\nstderr:\n${run.stderr()}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([run.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
