// The imperative shell around a rollout, shared by `kwave run`, `kwave rollback` and the demo:
// connect, take the plan's lease, load the rollout record, start the watch-backed cache, serve
// metrics, wire signals, run, and then close everything in the right order. All decisions are
// the runner's and below; this file only assembles and tears down.
import { ExitCode, KwaveError } from '../errors.js';
import { isForbidden, KubeError, kubeErrorToKwave, NodeCache, PodCache, type Cluster } from '../cluster/index.js';
import { connectFor } from './connectFor.js';
import { gateChecker, realSleep } from '../gates/index.js';
import { gateAppliesAfterWave } from '../rollout/gateCheck.js';
import { metricsSink } from '../metrics/fromEvents.js';
import { MetricsPusher } from '../metrics/push.js';
import { Notifier } from '../notify/notifier.js';
import { KwaveMetrics } from '../metrics/registry.js';
import { parseMetricsAddress } from '../metrics/address.js';
import { startMetricsServer, type MetricsServer } from '../metrics/server.js';
import type { Plan } from '../plan/types.js';
import type { EventSink, RolloutEvent } from '../rollout/events.js';
import { startRecord, type RolloutRecord } from '../record/record.js';
import { RecordStore } from '../record/store.js';
import { acquireWaiting, RunLock, runnerIdentity } from '../record/runLock.js';
import { unfinishedHalt } from '../record/unfinishedHalt.js';
import { rollbackRollout, runRollout, type ForcedRollback, type RunnerDeps } from '../rollout/runner.js';
import { selectFleet, zonesOf, type FleetSelection } from '../rollout/select.js';
import { renderSelector } from '../rollout/labelSelector.js';
import type { CommandContext } from './context.js';
import { createReporter } from './output/index.js';
import { followDisruptionBudgets } from './disruptionBudgets.js';
import { pdbProblems } from '../rollout/disruptionBudget.js';
import { rolloutAccessNeeds } from './accessNeeds.js';
import { accessRefusal, accessWarning, checkAccess } from './preflight.js';

export interface SessionOptions {
  plan: Plan;
  /** The plan file as the user named it (for hints in the output). */
  planFile: string;
  direction: 'upgrade' | 'rollback';
  /** Finish or roll back pods another revision of this plan left mid-flight, instead of refusing. */
  force?: boolean;
  /** Keep serving metrics this long after the end unless scraped first (`--metrics-linger`). */
  metricsLingerMs?: number;
  /** When another runner holds the lease, wait up to this long for it (`--lease-wait`); default 0. */
  leaseWaitMs?: number;
  /** Signals to listen to; default SIGINT and SIGTERM of this process. */
  signals?: NodeJS.Signals[];
  /** Told the metrics server's URL once it serves (the demo prints it). */
  onMetricsUrl?: (url: string) => void;
}

/** Runs (or rolls back) a plan against the cluster the common flags name; returns the exit code. */
export async function runSession(ctx: CommandContext, options: SessionOptions): Promise<number> {
  const { io, common } = ctx;
  const { plan } = options;
  const address = parseMetricsAddress(common.metricsAddress);
  const cluster = connectFor(common, io.env, plan);
  const metrics = new KwaveMetrics({ plan: plan.name });
  cluster.requests.onRequest((r) => metrics.kubeRequest(r.verb, r.resource, r.code));
  const namespace = plan.target.namespaces[0]!;
  const identity = runnerIdentity();
  const closers: (() => Promise<unknown> | unknown)[] = [() => cluster.close()];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };

  const stop = new AbortController();
  const abort = new AbortController();
  // Notifications go out in the background; at the end they get a short, bounded flush.
  const notifier = new Notifier(plan.notify, {
    revision: plan.revision,
    env: io.env,
    onResult: (r) => {
      metrics.notification(r.result);
      if (r.result !== 'sent') io.stderr.write(`kwave: notification ${r.kind} to ${r.target} ${r.result}: ${r.error ?? ''}\n`);
    },
  });
  const reporter = createReporter({ io, format: common.output, tty: common.output === 'text' && io.stdout.isTTY === true, plan: plan.name, planFile: options.planFile });
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
      reporter.close();
      // The last notifications get a moment (bounded), then the process leaves as promised.
      void notifier.flush(NOTIFY_EXIT_FLUSH_MS).finally(() => process.exit(ExitCode.INTERRUPTED));
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
      closers.push(() => server?.close({ lingerMs: ran ? (options.metricsLingerMs ?? 10_000) : 0, signal: lingerStop.signal }));
    }
    // Before the metrics server's last scrape, so that it counts them; after the lease is released.
    closers.push(() => notifier.flush(NOTIFY_FLUSH_MS));
    closers.push(() => {
      for (const s of signalNames) {
        process.off(s, onSignal);
        process.once(s, endLinger);
      }
    });
    const pushUrl = common.pushgateway ?? plan.metrics.pushgateway;
    const pusher = pushUrl ? new MetricsPusher(metrics, pushUrl) : undefined;
    const push = async () => {
      const r = await pusher?.push();
      if (r && !r.ok) io.stderr.write(`kwave: pushing metrics to ${r.url} failed: ${r.error}\n`);
    };

    // Permissions first: a missing one refuses the run before the lease or any pod is touched.
    const access = await wrapKube(() => checkAccess(cluster, rolloutAccessNeeds(plan)), 'checking permissions (SelfSubjectAccessReview)');
    if (access.denied.length > 0) throw accessRefusal(access.denied);
    for (const need of access.missingOptional) io.stderr.write(`kwave: ${accessWarning(need)}\n`);
    const mayFollowNodes = !access.missingOptional.some((n) => n.resource === 'nodes');
    const mayFollowPdbs = !access.missingOptional.some((n) => n.resource === 'poddisruptionbudgets');

    const lock = new RunLock(cluster, { namespace, plan: plan.name, identity, onLost: (message) => {
      io.stderr.write(`kwave: ${message}; stopping\n`);
      stop.abort();
    } });
    await wrapKube(
      () => acquireWaiting(lock, { waitMs: options.leaseWaitMs ?? 0, signal: stop.signal, onWait: (m) => io.stderr.write(`kwave: ${m}\n`) }),
      `taking the lease kwave-${plan.name} in namespace ${namespace}`,
    );
    closers.push(() => lock.release().catch(() => undefined));

    const cache = new PodCache(cluster, { namespaces: plan.target.namespaces, labelSelector: renderSelector(plan.target.selector) });
    closers.push(() => cache.close());
    await wrapKube(() => cache.synced, 'listing the selected pods');
    const nodes = mayFollowNodes ? await followNodes(cluster, (line) => io.stderr.write(`kwave: ${line}\n`)) : undefined;
    if (nodes) closers.push(() => nodes.close());
    const zones = nodes ? zonesOf(nodes.list()) : mayFollowNodes ? await readZones(cluster) : new Map<string, string>();
    const budgets = mayFollowPdbs ? await followDisruptionBudgets(cluster, plan, cache, (line) => io.stderr.write(`kwave: ${line}\n`)) : undefined;
    if (budgets) closers.push(() => budgets.close());

    // Refuse before touching the record: a refused run must not overwrite another revision's.
    const selection = options.direction === 'upgrade' ? selectFleet(plan, cache.list(), zones) : undefined;
    if (selection && budgets) selection.problems.push(...pdbProblems(selection.todo, budgets.view.pdbs(), budgets.view.pods()));
    const refusal = selection && refusalOf(selection, options.force ?? false);
    if (refusal) throw new KwaveError('REFUSED', refusal, ExitCode.BAD_INPUT);

    const records = new RecordStore(cluster, { namespace, plan: plan.name, onError: (err) => io.stderr.write(`kwave: saving the rollout record failed (will retry): ${err.message}\n`) });
    // Steps run in reverse: the last record state is written before the lease is released.
    // Once the lease is lost the record belongs to the new holder: write nothing more.
    closers.push(async () => {
      if (!lock.lost) await records.flush().catch(() => undefined);
      records.close();
    });
    const previous = await wrapKube(() => records.load(), `reading the rollout record kwave-${plan.name}`);
    const prior: RolloutRecord | undefined = previous?.ok ? previous.record : undefined;
    if (previous && !previous.ok) io.stderr.write(`kwave: the rollout record kwave-${plan.name} is damaged (${previous.problem}); starting a new one\n`);
    const record = startRecord(prior, { plan: plan.name, revision: plan.revision, planText: plan.source.text, holder: identity, now: new Date().toISOString(), direction: options.direction });
    await wrapKube(() => records.save(record, { flush: true }), `writing the rollout record kwave-${plan.name}`);

    const sink: EventSink = fanOut(reporter.sink, metricsSink(metrics, plan.gates.map((g) => g.name)), notifier.sink, (e) => {
      if (!lock.lost) records.feed(e);
      if (e.event === 'wave-end' || e.event === 'rollout-end') void push();
    });
    closers.push(() => reporter.close());
    const deps: RunnerDeps = {
      writer: cluster,
      view: cache,
      ...(nodes ? { nodes } : {}),
      ...(budgets ? { disruptionBudgets: budgets.view } : {}),
      zones,
      sink,
      sleep: realSleep,
      stop: stop.signal,
      abort: abort.signal,
      checkGate: gateChecker({ plan: plan.name, revision: plan.revision, metrics, sleep: realSleep, pauseTickMs: 5000 }),
      approvals: {
        isApproved: async (wave) => (await records.isApproved(wave)) !== undefined,
        waitForApproval: async (wave, signal) => {
          await records.waitForApproval(wave, signal ?? stop.signal);
        },
      },
      // Only results of this revision count, and only for the gates due after that wave.
      gatesPassed: (wave) =>
        prior?.revision === plan.revision &&
        plan.gates
          .filter((g) => gateAppliesAfterWave(g, wave, prior.waves))
          .every((g) => prior.gates.some((r) => r.wave === wave && r.gate === g.name && r.result === 'passed')),
      onUnavailable: (unavailable, budget) => metrics.setUnavailable(unavailable, budget),
      persistHalt: async () => {
        if (lock.lost) return;
        await records.flush().catch((err: unknown) => io.stderr.write(`kwave: writing the halt to the rollout record failed (a run killed now would upgrade again what it rolls back): ${err instanceof Error ? err.message : String(err)}\n`));
      },
    };
    const halt = options.direction === 'upgrade' ? unfinishedHalt(prior, plan) : undefined;
    if (halt) {
      deps.resumeHalt = halt;
      io.stderr.write(`kwave: an earlier run of this revision halted and did not finish (${halt.message}); carrying that halt on: no pod is upgraded, its rollback is finished\n`);
    }

    ran = true;
    if (selection && options.force) deps.force = forcedRollbacks(selection);
    const result = options.direction === 'upgrade' ? await runRollout(plan, deps) : await rollbackRollout(plan, deps);
    // The rollout's outcome stands even if its last record write fails.
    if (!lock.lost) await records.flush().catch((err: unknown) => io.stderr.write(`kwave: writing the final rollout record failed: ${err instanceof Error ? err.message : String(err)}\n`));
    await push();
    return result.exitCode;
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

function fanOut(...sinks: EventSink[]): EventSink {
  return (event: RolloutEvent) => {
    for (const s of sinks) s(event);
  };
}

async function wrapKube<T>(f: () => Promise<T>, doing: string): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof KubeError) throw kubeErrorToKwave(err, doing);
    throw err;
  }
}

/**
 * The node cache: one list and one watch of nodes, to defer pods whose node cannot act. Undefined
 * when nodes may not be listed (a namespaced Role): kwave then takes every node to be able to act.
 */
async function followNodes(cluster: Cluster, warn: (line: string) => void): Promise<NodeCache | undefined> {
  const nodes = new NodeCache(cluster);
  try {
    await nodes.synced;
    return nodes;
  } catch (err) {
    nodes.close();
    if (isForbidden(err)) {
      warn('listing nodes is forbidden: pods on nodes that cannot act are not told apart (they time out)');
      return undefined;
    }
    throw err instanceof KubeError ? kubeErrorToKwave(err, 'listing the nodes') : err;
  }
}

/** Nodes' zones for `order: spread-zones`; none when listing nodes is forbidden. */
async function readZones(cluster: Cluster): Promise<Map<string, string>> {
  try {
    return zonesOf(await cluster.listNodes());
  } catch (err) {
    if (isForbidden(err)) return new Map();
    throw err;
  }
}

/** Why the run must not start, from the selection's error-level problems; undefined if it may. */
function refusalOf(selection: FleetSelection, force: boolean): string | undefined {
  const errors = selection.problems.filter((p) => p.severity === 'error' && !(force && p.kind === 'other-revision'));
  if (errors.length === 0) return undefined;
  const shown = errors.slice(0, 10).map((p) => `  - ${p.message}`);
  if (errors.length > 10) shown.push(`  … and ${errors.length - 10} more (kwave plan lists them all)`);
  return `refusing to run:\n${shown.join('\n')}`;
}

/** `--force`: the pods another revision of this plan left mid-flight, for the runner to roll back first. */
function forcedRollbacks(selection: FleetSelection): ForcedRollback[] {
  return selection.problems.flatMap((p) => {
    if (p.kind !== 'other-revision' || !p.pod || !p.revision) return [];
    const [namespace, name] = p.pod.split('/') as [string, string];
    return [{ namespace, name, revision: p.revision }];
  });
}
