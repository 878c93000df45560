// A rollout from start to end, for `kwave run`, `kwave rollback`, the demo and library users:
// serve metrics, wire signals, open each cluster (openCluster.ts: connect, permissions, lease,
// caches, the assessment; clusterRecord.ts: the record), run, keep the owners in step, and then
// close everything in the right order. A multi-cluster plan opens every cluster before any pod is
// touched (a refusal in one runs none), then runs one runner per cluster, taking turns by the
// plan's clusterOrder (rollout/clusterTurns.ts); a halt in one halts all. All decisions are the
// runners' and below; this file only assembles and tears down. It shows no progress itself: the
// caller's sinks do (the CLI's terminal reporter), and its warnings go to `io.stderr`.
import { ExitCode } from '../errors.js';
import { KubeError, kubeErrorToKwave } from '../cluster/index.js';
import { MetricsPusher } from '../metrics/push.js';
import { Notifier } from '../notify/notifier.js';
import { KwaveMetrics } from '../metrics/registry.js';
import { parseMetricsAddress } from '../metrics/address.js';
import { startMetricsServer, type MetricsServer } from '../metrics/server.js';
import type { Plan } from '../plan/types.js';
import type { EventSink, RolloutPhase } from '../rollout/events.js';
import { runnerIdentity } from '../lease/runnerIdentity.js';
import { ClusterTurns } from '../rollout/clusterTurns.js';
import { rollbackRollout, runRollout, type RunResult } from '../rollout/runner.js';
import { startClusterRecord, type ReadyCluster } from './clusterRecord.js';
import type { ConnectionOptions } from './connection.js';
import {
  openCluster,
  type Closer,
  type ClusterOpenOptions,
  type ClusterTarget,
  type OpenCluster,
  type SessionIO,
} from './openCluster.js';
import { keepOwnersInStep } from './owners.js';

/** Where one cluster's events go besides the record, the metrics and the notifications. */
export interface EventOutput {
  sink: EventSink;
  /** Writes what is still held, before something else writes to the same stream. */
  flush?(): void;
  /** The run is over (or a second signal ends it): stop drawing, write what is held. */
  close?(): void;
}

/** One cluster's end; `cluster` is undefined for a plan of one cluster. */
export interface ClusterEnd {
  cluster: string | undefined;
  phase: RolloutPhase;
  exitCode: number;
  message: string;
}

export interface RunPlanOptions {
  /** The kubeconfig and rate limit; its context is the cluster of a plan of one (spec.clusters name their own). */
  connection: ConnectionOptions;
  io: SessionIO;
  /** Each cluster's output (the CLI's terminal reporter); `cluster` is undefined for a plan of one cluster. */
  sinks?: (cluster: string | undefined) => EventOutput;
  /** Told every cluster's end, and the plan's exit code, before anything is closed. */
  onEnd?: (clusters: ClusterEnd[], exitCode: number) => void;
  direction: 'upgrade' | 'rollback';
  /** Finish or roll back pods another revision of this plan left mid-flight, instead of refusing. */
  force?: boolean;
  /** `--retry`: run a revision whose last run halted again (its failed pods are upgraded anew). */
  retry?: boolean;
  /** Where to serve metrics (`HOST:PORT` or `off`, as --metrics-address); default off. */
  metricsAddress?: string;
  /** Push metrics to this Pushgateway at wave ends (over the plan's spec.metrics.pushgateway). */
  pushgateway?: string;
  /** Keep serving metrics this long after the end unless scraped first (`--metrics-linger`). */
  metricsLingerMs?: number;
  /** When another runner holds the lease, wait up to this long for it (`--lease-wait`); default 0. */
  leaseWaitMs?: number;
  /** Signals to listen to; default SIGINT and SIGTERM of this process. */
  signals?: NodeJS.Signals[];
  /** Told the metrics server's URL once it serves (the demo prints it). */
  onMetricsUrl?: (url: string) => void;
}

/**
 * Runs (or rolls back) a plan against the cluster `connection` names, or the plan's clusters;
 * returns the exit code. A run that may not start throws KwaveError (exit 2: refused, locked,
 * forbidden).
 */
export async function runPlan(plan: Plan, options: RunPlanOptions): Promise<number> {
  const { io } = options;
  const address = parseMetricsAddress(options.metricsAddress ?? 'off');
  const multi = plan.clusters;
  const targets: ClusterTarget[] = multi
    ? multi.list.map((c) => ({ name: c.name, context: c.context }))
    : [{ name: undefined, context: options.connection.context }];
  const metrics = new KwaveMetrics(
    multi ? { plan: plan.name, clusters: multi.list.map((c) => c.name) } : { plan: plan.name },
  );
  const identity = runnerIdentity();
  const closers: Closer[] = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };

  const stop = new AbortController();
  const abort = new AbortController();
  // Notifications go out in the background; at the end they get a short, bounded flush. One
  // notifier per cluster: each cluster's rollout reports its own events (they carry `cluster`).
  const notifiers = targets.map(
    (t) =>
      new Notifier(plan.notify, {
        revision: plan.revision,
        env: io.env,
        onResult: (r) => {
          (t.name === undefined ? metrics : metrics.forCluster(t.name)).notification(r.result);
          if (r.result !== 'sent')
            io.stderr.write(`kwave: notification ${r.kind} to ${r.target} ${r.result}: ${r.error ?? ''}\n`);
        },
      }),
  );
  const flushNotifiers = async (ms: number) => {
    await Promise.all(notifiers.map((n) => n.flush(ms)));
  };
  const outputs: EventOutput[] = targets.map((t) => options.sinks?.(t.name) ?? { sink: () => undefined });
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      io.stderr.write(`\nkwave: ${sig}: no new pods start; pods in flight finish (again to exit at once)\n`);
      stop.abort();
    } else {
      // Nothing is lost: every pod's state is on the pod, and the record says Progressing.
      io.stderr.write(`kwave: ${sig} again: exiting now; run the same plan again to resume\n`);
      abort.abort();
      for (const r of outputs) r.close?.();
      // The last notifications get a moment (bounded), then the process leaves as promised.
      void flushNotifiers(NOTIFY_EXIT_FLUSH_MS).finally(() => process.exit(ExitCode.INTERRUPTED));
    }
  };
  const signalNames = options.signals ?? (['SIGINT', 'SIGTERM'] as NodeJS.Signals[]);
  for (const s of signalNames) process.on(s, onSignal);
  const lingerStop = new AbortController();
  const endLinger = () => lingerStop.abort();
  let ran = false;

  try {
    let server: MetricsServer | undefined;
    if (address) {
      server = await startMetricsServer(metrics, address);
      if (options.onMetricsUrl) options.onMetricsUrl(server.url);
      // Port 0 lets the OS pick: say which one, or nobody could scrape it.
      else if (address.port === 0) io.stderr.write(`kwave: serving metrics on ${server.url}\n`);
      // Linger only after a rollout ran (a refused or locked run has nothing to be scraped for).
      // Pushed here, this runs after the signal handlers are gone: a Ctrl-C then ends the wait.
      closers.push(() =>
        server?.close({ lingerMs: ran ? (options.metricsLingerMs ?? 10_000) : 0, signal: lingerStop.signal }),
      );
    }
    // Before the metrics server's last scrape, so that it counts them; after the lease is released.
    closers.push(() => flushNotifiers(NOTIFY_FLUSH_MS));
    closers.push(() => {
      for (const s of signalNames) {
        process.off(s, onSignal);
        process.once(s, endLinger);
      }
    });
    const pushUrl = options.pushgateway ?? plan.metrics.pushgateway;
    const pusher = pushUrl ? new MetricsPusher(metrics, pushUrl) : undefined;
    const push = async () => {
      const r = await pusher?.push();
      if (r && !r.ok) io.stderr.write(`kwave: pushing metrics to ${r.url} failed: ${r.error}\n`);
    };

    const openOptions = targets.map((target): ClusterOpenOptions => ({
      io,
      connection: options.connection,
      plan,
      target,
      direction: options.direction,
      force: options.force ?? false,
      retry: options.retry ?? false,
      leaseWaitMs: options.leaseWaitMs ?? 0,
      identity,
      metrics: target.name === undefined ? metrics : metrics.forCluster(target.name),
      stop,
      abort: abort.signal,
      closers,
    }));
    // Every cluster is opened and checked before any record is written or pod touched.
    const opened: OpenCluster[] = [];
    for (const o of openOptions) opened.push(await openCluster(o));
    // Turns are an upgrade's: a rollback reverts one cluster after another, and a rollback halted
    // in one cluster (`kwave abort --cluster`) leaves the others' rollbacks to go on.
    const turns =
      multi && options.direction === 'upgrade'
        ? new ClusterTurns(
            multi.order,
            targets.map((t) => t.name!),
          )
        : undefined;
    const ready: ReadyCluster[] = [];
    for (const [i, o] of openOptions.entries()) {
      // A halt in one cluster halts the plan: the others hear it through their turns.
      const onEvent: EventSink | undefined = turns
        ? (e) => {
            if (e.event === 'halt' && e.reason !== 'cluster') turns.haltFrom(i, e.message);
          }
        : undefined;
      ready.push(
        await startClusterRecord(
          o,
          opened[i]!,
          [outputs[i]!.sink, notifiers[i]!.sink, ...(onEvent ? [onEvent] : [])],
          push,
        ),
      );
    }
    closers.push(() => {
      for (const r of outputs) r.close?.();
    });

    ran = true;
    const results = await runClusters(plan, ready, options.direction, turns);
    // spec.owners: OnDelete owners' templates follow the pods (or go back after a rollback).
    let ownersFailed: 'forbidden' | 'other' | undefined;
    for (const [i, c] of ready.entries()) {
      const step = await keepOwnersInStep(c.cluster, plan, options.direction, c.owners, results[i]!.exitCode, (key) => {
        const [ns, name] = key.split('/') as [string, string];
        return c.cache.get(ns, name);
      });
      for (const line of step.lines)
        io.stderr.write(`kwave: ${c.target.name === undefined ? '' : `${c.target.name}: `}${line}\n`);
      if (step.failed > 0) ownersFailed = step.forbidden ? 'forbidden' : (ownersFailed ?? 'other');
    }
    // The rollout's outcome stands even if its last record write fails.
    for (const c of ready) {
      if (!c.lock.lost)
        await c.records
          .flush()
          .catch((err: unknown) =>
            io.stderr.write(
              `kwave: writing the final rollout record${c.where} failed: ${err instanceof Error ? err.message : String(err)}\n`,
            ),
          );
    }
    await push();
    const exitCode = planExitCode(results.map((r) => r.exitCode));
    options.onEnd?.(
      targets.map((t, i) => ({
        cluster: t.name,
        phase: results[i]!.phase,
        exitCode: results[i]!.exitCode,
        message: results[i]!.message,
      })),
      exitCode,
    );
    if (ownersFailed && exitCode === ExitCode.OK)
      return ownersFailed === 'forbidden' ? ExitCode.BAD_INPUT : ExitCode.INTERNAL;
    return exitCode;
  } catch (err) {
    if (err instanceof KubeError) throw kubeErrorToKwave(err, 'talking to the cluster');
    throw err;
  } finally {
    await closeAll();
    for (const s of signalNames) {
      process.off(s, onSignal);
      process.off(s, endLinger);
    }
  }
}

/** How long pending notifications may hold up the end of a run, and an exit on a second signal. */
const NOTIFY_FLUSH_MS = 5_000;
const NOTIFY_EXIT_FLUSH_MS = 1_000;

/**
 * One runner per cluster. An upgrade runs them all at once, each waiting for its turns; a
 * rollback (`kwave rollback`) reverts one cluster after another, last listed first. An error in
 * one cluster's runner stops the others (as a first signal would) and is rethrown once all ended.
 */
async function runClusters(
  plan: Plan,
  clusters: readonly ReadyCluster[],
  direction: 'upgrade' | 'rollback',
  turns: ClusterTurns | undefined,
): Promise<RunResult[]> {
  if (direction === 'rollback') {
    const results: RunResult[] = [];
    for (const c of [...clusters].reverse()) results.unshift(await rollbackRollout(plan, c.deps));
    return results;
  }
  const settled = await Promise.allSettled(
    clusters.map(async (c, i) => {
      try {
        const result = await runRollout(plan, turns ? { ...c.deps, turns: turns.turn(i) } : c.deps);
        // A run that ends halted without a halt event (carrying on an earlier run's halt) halts the plan too.
        if (result.exitCode === ExitCode.HALTED) turns?.haltFrom(i, result.message);
        return result;
      } catch (err) {
        // Nothing more starts anywhere; what is in flight elsewhere finishes.
        turns?.haltFrom(i, `an error: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      } finally {
        turns?.finished(i);
      }
    }),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<RunResult>).value);
}

/**
 * A multi-cluster plan's exit code from its clusters': a halt anywhere (3) first, then an
 * interruption (4), nodes that could not act (5), an internal error; 0 only if all are 0.
 */
export function planExitCode(codes: readonly number[]): number {
  for (const code of [
    ExitCode.HALTED,
    ExitCode.INTERRUPTED,
    ExitCode.NODES_DOWN,
    ExitCode.BAD_INPUT,
    ExitCode.INTERNAL,
  ])
    if (codes.includes(code)) return code;
  return codes.find((c) => c !== ExitCode.OK) ?? ExitCode.OK;
}
