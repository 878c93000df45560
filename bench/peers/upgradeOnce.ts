// One tool upgrading one fresh fleet, measured from outside the tool: the bench watches the
// fleet's pods (FleetProgress) from the change to the last pod Ready on the target imageID, reads
// the tool's writes from kube-apiserver's audit log, the pods' unready seconds and the most not
// Ready at once from /sim/stats (the most not Ready also from its own watch), and the tool's CPU and peak RSS (GNU time around a command;
// /proc for kruise-manager, which runs on: its CPU across the window, its peak RSS since the
// window began, VmHWM being reset through /proc/PID/clear_refs).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeHttp } from '../../src/sim/agent/kubeHttp.js';
import { AuditTail } from '../../src/sim/controlPlane/audit.js';
import { realSleep as sleep } from '../../src/sleep.js';
import { cpuSecondsOf, memoryOf, runTimed, type Usage } from '../fleet/processes.js';
import { APP_LABEL, CONTAINER, changeCloneSetImage, listPods, TO_IMAGE, type PodObject } from './cluster.js';
import { FleetProgress } from './fleetProgress.js';
import { writesOf, type Measurement, type Requester, type Tool } from './rows.js';

export interface Setting {
  pods: number;
  maxUnavailable: number;
  drainSeconds: number;
  /** The target image's digest (`sha256:…`), from the simulator's image table. */
  toDigest: string;
}

export interface Cluster {
  http: KubeHttp;
  kubeconfig: string;
  metricsUrl: string;
  audit: AuditTail;
  /** The admin user (kwave's and kubectl's). */
  adminUser: string;
  kruise?: { pid: number; user: string };
}

/** The plan kwave runs: one wave of every pod, concurrency = maxUnavailable = M, drain D. */
export function kwavePlan(namespace: string, s: Pick<Setting, 'maxUnavailable' | 'drainSeconds'>): string {
  return `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: peers }
spec:
  target: { namespace: ${namespace}, selector: { matchLabels: { app: ${APP_LABEL.app} } } }
  update: { containers: [{ name: ${CONTAINER}, image: "${TO_IMAGE}" }] }
  strategy: { waves: ["100%"], concurrency: ${s.maxUnavailable}, maxUnavailable: ${s.maxUnavailable}, drainSeconds: ${s.drainSeconds}, podTimeout: 10m }
`;
}

interface Stats {
  maxNotReady: Record<string, number>;
  unreadySeconds: Record<string, { p50: number; p95: number; max: number }>;
}

/** Follows the namespace's pods from `resourceVersion` into `progress`; resolves when `count` are done. */
function follow(http: KubeHttp, namespace: string, resourceVersion: string, progress: FleetProgress, count: number) {
  let settle: () => void = () => {};
  const done = new Promise<void>((resolve) => (settle = resolve));
  const watch = http.watch(
    `/api/v1/namespaces/${namespace}/pods?watch=true&resourceVersion=${resourceVersion}&allowWatchBookmarks=true`,
    (type, object) => {
      const pod = object as unknown as PodObject;
      if (type === 'ADDED' || type === 'MODIFIED') progress.observe(pod, performance.now());
      else if (type === 'DELETED') progress.remove(pod.metadata.name);
      if (progress.done(count)) settle();
    },
  );
  return { done, watch };
}

/** Runs a command under GNU time (its children's CPU included, once waited for). */
function timed(dir: string, name: string, executable: string, args: string[], env?: NodeJS.ProcessEnv) {
  return runTimed(args, {
    executable,
    usageFile: path.join(dir, `${name}.time`),
    stdoutFile: path.join(dir, `${name}.out`),
    ...(env ? { env } : {}),
  });
}

/** The tool's change, started; resolves with its process's usage (undefined for Kruise: a change to its CloneSet). */
async function change(tool: Tool, namespace: string, s: Setting, c: Cluster, dir: string) {
  const name = `${tool}-${namespace}`;
  if (tool === 'kruise') {
    await changeCloneSetImage(c.http, namespace, TO_IMAGE);
    return undefined;
  }
  if (tool === 'kwave') {
    const plan = path.join(dir, `${name}.yaml`);
    writeFileSync(plan, kwavePlan(namespace, s));
    return timed(dir, name, process.execPath, [
      'bin/kwave.js',
      'run',
      plan,
      '--kubeconfig',
      c.kubeconfig,
      '-o',
      'json',
      '--metrics-address',
      'off',
    ]);
  }
  if (tool === 'minimal')
    return timed(dir, name, process.execPath, [
      'bench/fleet/minimal-client.mjs',
      '--namespace',
      namespace,
      '--selector',
      `app=${APP_LABEL.app}`,
      '--drain-seconds',
      String(s.drainSeconds),
      c.kubeconfig,
      String(s.maxUnavailable),
      TO_IMAGE,
      String(s.pods),
    ]);
  return timed(
    dir,
    name,
    'bash',
    [
      'bench/fleet/kubectl-loop.sh',
      namespace,
      `app=${APP_LABEL.app}`,
      CONTAINER,
      TO_IMAGE,
      String(s.maxUnavailable),
      String(s.pods),
    ],
    { ...process.env, KUBECONFIG: c.kubeconfig },
  );
}

function requester(tool: Tool, c: Cluster): Requester {
  if (tool === 'kruise') return { user: c.kruise!.user };
  const userAgentPrefix = { kwave: 'kwave/', minimal: 'kwave-minimal-client', 'kubectl-loop': 'kubectl/' }[tool];
  return { user: c.adminUser, userAgentPrefix };
}

/** Upgrades the fleet in `namespace` (N pods Ready on the old image) with `tool`, and measures it. */
export async function upgradeOnce(
  tool: Tool,
  namespace: string,
  s: Setting,
  c: Cluster,
  dir: string,
  timeoutMs = 30 * 60_000,
): Promise<Measurement & { problems: string[]; exitCode?: number | null }> {
  const before = await listPods(c.http, namespace);
  const reset = await fetch(`${c.metricsUrl}/sim/stats/reset`, { method: 'POST' });
  if (!reset.ok) throw new Error(`POST /sim/stats/reset: ${reset.status}`);
  c.audit.read(); // what came before the change is not the tool's
  let kruiseCpu0 = 0;
  if (tool === 'kruise') {
    kruiseCpu0 = cpuSecondsOf(c.kruise!.pid);
    writeFileSync(`/proc/${c.kruise!.pid}/clear_refs`, '5'); // VmHWM from now
  }
  const startedAt = performance.now();
  const progress = new FleetProgress(before.items, {
    container: CONTAINER,
    toImage: TO_IMAGE,
    toDigest: s.toDigest,
    startedAt,
  });
  const { done, watch } = follow(c.http, namespace, before.resourceVersion, progress, s.pods);
  const running = change(tool, namespace, s, c, dir);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${tool}: the fleet was not upgraded within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
  });
  let finished: Awaited<typeof running>;
  try {
    [, finished] = await Promise.race([Promise.all([done, running]), timeout, watch.done.then(() => timeout)]);
  } finally {
    clearTimeout(timer);
    watch.abort();
  }
  const summary = progress.summary();
  // Writes that follow the last pod (status, the record, a lease released) are the tool's too.
  await sleep(1000);
  const writes = writesOf(c.audit.read(), requester(tool, c));
  const stats = (await (await fetch(`${c.metricsUrl}/sim/stats`)).json()) as Stats;
  let usage: Pick<Usage, 'cpuSeconds' | 'peakRssBytes'>;
  if (finished) usage = finished.usage;
  else
    usage = {
      cpuSeconds: cpuSecondsOf(c.kruise!.pid) - kruiseCpu0,
      peakRssBytes: memoryOf(c.kruise!.pid).peakRssBytes,
    };
  return {
    tool,
    pods: s.pods,
    wallSeconds: summary.wallMs / 1000,
    writes,
    unready: stats.unreadySeconds[namespace] ?? { p50: 0, p95: 0, max: 0 },
    maxNotReady: stats.maxNotReady[namespace] ?? 0,
    maxNotReadyWatched: summary.maxNotReady,
    maxNotReadyByTool: summary.maxNotReadyByTool,
    cpuSeconds: usage.cpuSeconds,
    rssMb: Math.round(usage.peakRssBytes / 1024 / 1024),
    inPlace: summary.inPlace,
    drainsSeconds: summary.drainsMs.map((ms) => ms / 1000),
    readyMidDrain: summary.readyMidDrain,
    readyLostAfterDone: summary.readyLostAfterDone,
    phases: summary.phases,
    problems: summary.problems,
    ...(finished ? { exitCode: finished.code } : {}),
  };
}
