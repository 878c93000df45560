// One cluster's part of a run (`kwave run`, `kwave rollback`, the demo): connect, take the plan's
// lease, follow the selected pods and the nodes, refuse what must not run, then load and start
// the rollout record and assemble the runner's deps. A plan of one cluster has one of these; a
// multi-cluster plan one per cluster (rolloutSession.ts drives them). Everything it opens is
// handed to `closers`, to be closed last first.
import type { V1Pod } from '@kubernetes/client-node';
import { followRecordControl } from './recordControl.js';
import { ExitCode, KwaveError } from '../errors.js';
import { isForbidden, KubeError, kubeErrorToKwave, NodeCache, PodCache, type Cluster } from '../cluster/index.js';
import { connectFor } from './connectFor.js';
import { gateChecker } from '../gates/index.js';
import { realSleep } from '../sleep.js';
import { ownedBy } from '../inplace/state.js';
import { gateAppliesAfterWave } from '../rollout/gateCheck.js';
import { metricsSink } from '../metrics/fromEvents.js';
import type { KwaveMetrics } from '../metrics/registry.js';
import type { Plan } from '../plan/types.js';
import type { EventSink, RolloutEvent } from '../rollout/events.js';
import { startRecord, type RolloutRecord } from '../record/record.js';
import { RecordStore } from '../record/store.js';
import { acquireWaiting, RunLock } from '../record/runLock.js';
import { holderPodWriter, holderRecordApi } from '../record/holderWrites.js';
import { rolloutAccessNeeds } from './accessNeeds.js';
import { accessRefusal, accessWarning, checkAccess } from './preflight.js';
import { standingHalt, type StandingHalt } from '../record/standingHalt.js';
import type { ForcedRollback, RunnerDeps } from '../rollout/runner.js';
import { followDisruptionBudgets } from './disruptionBudgets.js';
import { pdbProblems } from '../rollout/disruptionBudget.js';
import type { OwnerEntry } from '../rollout/owners.js';
import { ownersOf } from './ownerSteps.js';
import { prePuller } from './prePuller.js';
import { selectFleet, zonesOf, type FleetSelection } from '../rollout/select.js';
import { renderSelector } from '../rollout/labelSelector.js';
import type { CommandContext } from './context.js';

export type Closer = () => Promise<unknown> | unknown;

export interface ClusterTarget {
  /** The plan's name for the cluster; undefined for a plan of one cluster. */
  name: string | undefined;
  /** The kubeconfig context; undefined: the current one. */
  context: string | undefined;
}

export interface ClusterOpenOptions {
  ctx: CommandContext;
  plan: Plan;
  target: ClusterTarget;
  direction: 'upgrade' | 'rollback';
  force: boolean;
  /** `--retry`: upgrade the failed pods of a halt that ended again, instead of keeping it. */
  retry: boolean;
  /** When another runner holds the lease, wait up to this long for it (`--lease-wait`). */
  leaseWaitMs: number;
  identity: string;
  /** This cluster's metrics (a multi-cluster plan's view labelled with the cluster). */
  metrics: KwaveMetrics;
  /** First signal, or a lost lease anywhere: start nothing new. */
  stop: AbortController;
  abort: AbortSignal;
  closers: Closer[];
}

/** A cluster connected, its lease held, its pods and nodes followed, its selection checked: nothing written yet. */
export interface OpenCluster {
  target: ClusterTarget;
  cluster: Cluster;
  lock: RunLock;
  cache: PodCache;
  nodes: NodeCache | undefined;
  budgets: Awaited<ReturnType<typeof followDisruptionBudgets>>;
  pullers: ReturnType<typeof prePuller> | undefined;
  zones: Map<string, string>;
  /** `--force`: the pods another revision left mid-flight, to roll back first. Not the selection
   * itself: held for the whole run, it kept a second view of every pod (the runner selects anew). */
  forced: ForcedRollback[] | undefined;
  /** The selected pods' owners (spec.owners), for after the run. */
  owners: OwnerEntry[];
  /** ` in cluster eu-1` for a multi-cluster plan's messages, else empty. */
  where: string;
  /** The second signal, or this cluster's lease lost (reason: KwaveError LEASE_LOST): leave at once. */
  abort: AbortSignal;
}

/** Step 1: everything up to the refusal check; throws (exit 2) when this cluster's selection may not run. */
export async function openCluster(o: ClusterOpenOptions): Promise<OpenCluster> {
  const { io, common } = o.ctx;
  const { plan, target } = o;
  const where = target.name === undefined ? '' : ` in cluster ${target.name} (context ${target.context})`;
  const cluster = connectFor({ ...common, context: target.context }, io.env, plan);
  o.closers.push(() => cluster.close());
  cluster.requests.onRequest((r) => o.metrics.kubeRequest(r.verb, r.resource, r.code, r.seconds));
  const namespace = plan.target.namespaces[0]!;
  const say = (line: string) =>
    io.stderr.write(`kwave: ${target.name === undefined ? '' : `${target.name}: `}${line}\n`);

  // Permissions first: a missing one refuses the run before the lease or any pod is touched.
  const access = await wrapKube(
    () => checkAccess(cluster, rolloutAccessNeeds(plan)),
    `checking permissions (SelfSubjectAccessReview)${where}`,
  );
  if (access.denied.length > 0) {
    const refusal = accessRefusal(access.denied);
    throw target.name === undefined
      ? refusal
      : new KwaveError(refusal.code, `cluster ${target.name}: ${refusal.message}`, refusal.exitCode);
  }
  for (const need of access.missingOptional) say(accessWarning(need));
  const mayFollowNodes = !access.missingOptional.some((n) => n.resource === 'nodes');
  const mayFollowPdbs = !access.missingOptional.some((n) => n.resource === 'poddisruptionbudgets');
  const unreadableOwners = new Set(
    access.missingOptional.filter((n) => n.group === 'apps' && n.verb === 'get').map((n) => n.resource),
  );

  // A lost lease stops every cluster's starts (as a first signal) and this cluster's writes at once.
  const leaseLost = new AbortController();
  const abort = AbortSignal.any([o.abort, leaseLost.signal]);
  const lock = new RunLock(cluster, {
    namespace,
    plan: plan.name,
    identity: o.identity,
    onLost: (message) => {
      say(`${message}; stopping`);
      leaseLost.abort(new KwaveError('LEASE_LOST', message, ExitCode.INTERRUPTED));
      o.stop.abort();
    },
    onDoubt: say,
    onConfirmed: say,
  });
  await wrapKube(
    () => acquireWaiting(lock, { waitMs: o.leaseWaitMs, signal: o.stop.signal, onWait: say }),
    `taking the lease kwave-${plan.name} in namespace ${namespace}${where}`,
  );
  o.closers.push(() => lock.release().catch(() => undefined));

  const cache = new PodCache(cluster, {
    namespaces: plan.target.namespaces,
    labelSelector: renderSelector(plan.target.selector),
  });
  o.closers.push(() => cache.close());
  await wrapKube(() => cache.synced, `listing the selected pods${where}`);
  const nodes = mayFollowNodes ? await followNodes(cluster, say, where) : undefined;
  if (nodes) o.closers.push(() => nodes.close());
  const zones = nodes ? zonesOf(nodes.list()) : mayFollowNodes ? await readZones(cluster) : new Map<string, string>();
  const budgets = mayFollowPdbs ? await followDisruptionBudgets(cluster, plan, cache, say) : undefined;
  if (budgets) o.closers.push(() => budgets.close());
  const pullers = plan.strategy.prePull ? prePuller(cluster, plan, nodes, abort) : undefined;
  if (pullers) o.closers.push(() => pullers.close());

  // Refuse before touching the record: a refused run must not overwrite another revision's.
  const selection = o.direction === 'upgrade' ? selectFleet(plan, cache.list(), zones) : undefined;
  if (selection && budgets)
    selection.problems.push(...pdbProblems(selection.todo, budgets.view.pdbs(), budgets.view.pods()));
  const owners = await ownersOf(cluster, plan, selection, cache.list(), say, unreadableOwners);
  if (selection) selection.problems.push(...owners.problems);
  const refusal = selection && refusalOf(selection, o.force);
  if (refusal)
    throw new KwaveError(
      'REFUSED',
      target.name === undefined ? refusal : `cluster ${target.name}: ${refusal}`,
      ExitCode.BAD_INPUT,
    );
  const forced = selection && o.force ? forcedRollbacks(selection) : undefined;
  return { target, cluster, lock, cache, nodes, budgets, pullers, zones, forced, owners: owners.entries, where, abort };
}

export interface ReadyCluster extends OpenCluster {
  records: RecordStore;
  deps: RunnerDeps;
}

/** Step 2: the rollout record loaded and started, the sink wired, the runner's deps assembled. */
export async function startClusterRecord(
  o: ClusterOpenOptions,
  open: OpenCluster,
  sinks: readonly EventSink[],
  push: () => Promise<void>,
): Promise<ReadyCluster> {
  const { io } = o.ctx;
  const { plan } = o;
  const { cluster, lock, where } = open;
  const namespace = plan.target.namespaces[0]!;
  const say = (line: string) =>
    io.stderr.write(`kwave: ${open.target.name === undefined ? '' : `${open.target.name}: `}${line}\n`);
  const records = new RecordStore(holderRecordApi(cluster, lock), {
    namespace,
    plan: plan.name,
    onError: (err) => say(`saving the rollout record failed (will retry): ${err.message}`),
  });
  // Steps run in reverse: the last record state is written before the lease is released.
  // Once the lease is lost the record belongs to the new holder: write nothing more.
  o.closers.push(async () => {
    if (!lock.lost) await records.flush().catch(() => undefined);
    records.close();
  });
  const previous = await wrapKube(() => records.load(), `reading the rollout record kwave-${plan.name}${where}`);
  const prior: RolloutRecord | undefined = previous?.ok ? previous.record : undefined;
  if (previous && !previous.ok)
    say(`the rollout record kwave-${plan.name} is damaged (${previous.problem}); starting a new one`);
  const record = startRecord(prior, {
    plan: plan.name,
    revision: plan.revision,
    planText: plan.source.text,
    holder: o.identity,
    now: new Date().toISOString(),
    direction: o.direction,
  });
  await wrapKube(() => records.save(record, { flush: true }), `writing the rollout record kwave-${plan.name}${where}`);

  // kwave pause / resume / abort, from anywhere: followed on the record by watch.
  const control = followRecordControl(cluster, {
    namespace,
    plan: plan.name,
    revision: plan.revision,
    identity: o.identity,
    onError: (err) => say(`watching the rollout record for pause/abort: ${err.message} (retrying)`),
    onProblem: (problem) => say(`the rollout record's pause/abort requests are damaged (${problem}); ignoring them`),
  });
  o.closers.push(() => control.close());
  // Start knowing whether a pause stands; a record that cannot be read in time is followed on.
  await Promise.race([control.ready, new Promise((resolve) => setTimeout(resolve, CONTROL_READY_MS).unref())]);

  const label = open.target.name;
  const feed = fanOut(
    ...sinks,
    metricsSink(
      o.metrics,
      plan.gates.map((g) => g.name),
      new Set(plan.gates.filter((g) => g.prometheus?.dryRun).map((g) => g.name)),
    ),
    (e) => {
      if (!lock.lost) records.feed(e);
      if (e.event === 'wave-end' || e.event === 'rollout-end') void push();
    },
  );
  // A multi-cluster plan's events say which cluster they come from.
  const sink: EventSink = label === undefined ? feed : (e) => feed({ ...e, cluster: label });
  const stop = o.stop.signal;
  const deps: RunnerDeps = {
    writer: holderPodWriter(cluster, lock),
    view: open.cache,
    ...(open.nodes ? { nodes: open.nodes } : {}),
    ...(open.budgets ? { disruptionBudgets: open.budgets.view } : {}),
    ...(open.pullers ? { prePull: (wave: number, pods: readonly V1Pod[]) => open.pullers!.pull(wave, pods) } : {}),
    zones: open.zones,
    sink,
    sleep: realSleep,
    stop,
    abort: open.abort,
    checkGate: gateChecker({
      plan: plan.name,
      revision: plan.revision,
      metrics: o.metrics,
      sleep: realSleep,
      pauseTickMs: 5000,
    }),
    approvals: {
      isApproved: async (wave) => (await records.isApproved(wave)) !== undefined,
      waitForApproval: async (wave, signal) => {
        await records.waitForApproval(wave, signal ?? stop);
      },
    },
    // Only results of this revision count, and only for the gates due after that wave.
    gatesPassed: (wave) =>
      prior !== undefined &&
      ownedBy(prior, plan.name, plan.revision) &&
      plan.gates
        .filter((g) => gateAppliesAfterWave(g, wave, prior.waves))
        .every((g) => prior.gates.some((r) => r.wave === wave && r.gate === g.name && r.result === 'passed')),
    onUnavailable: (unavailable, budget) => o.metrics.setUnavailable(unavailable, budget),
    control,
    // The halt reaches the record before the first rollback patch, or a run killed (or a lease
    // lost) mid-rollback would be resumed as an upgrade and patch its pods again. Each attempt is
    // the requester's (retried for up to a minute); a lease in doubt holds it until confirmed.
    persistHalt: async () => {
      for (let attempt = 1; ; attempt++) {
        if (lock.lost) return;
        try {
          return await records.flush();
        } catch (err) {
          if (lock.lost) return;
          const last = attempt === PERSIST_HALT_ATTEMPTS;
          say(
            `writing the halt to the rollout record failed${last ? ' (a run killed now would upgrade again what it rolls back)' : ', trying again'}: ${err instanceof Error ? err.message : String(err)}`,
          );
          if (last) return;
        }
      }
    },
  };
  const standing =
    o.direction === 'upgrade'
      ? standingHalt(prior, plan, { retry: o.retry, abandonedBy: lock.abandonedBy })
      : undefined;
  if (standing) {
    deps.resumeHalt = standing.halt;
    say(standingHaltLine(standing));
  }
  if (open.forced) deps.force = open.forced;
  return { ...open, records, deps };
}

function standingHaltLine({ how, halt }: StandingHalt): string {
  if (how === 'ended')
    return `this revision halted in an earlier run (${halt.message}) and stays halted: no pod is upgraded; run it with --retry to upgrade its failed pods again, or change the plan`;
  const what = how === 'unfinished' ? 'halted and did not finish' : 'halted and died before it let go of the plan';
  return `an earlier run of this revision ${what} (${halt.message}); carrying that halt on: no pod is upgraded, its rollback is finished`;
}

/** How long a run waits to learn whether a pause stands before it starts anyway. */
const CONTROL_READY_MS = 30_000;
/** Tries at writing a halt to the record before its rollback goes ahead without it. */
const PERSIST_HALT_ATTEMPTS = 3;

function fanOut(...sinks: EventSink[]): EventSink {
  return (event: RolloutEvent) => {
    for (const s of sinks) s(event);
  };
}

export async function wrapKube<T>(f: () => Promise<T>, doing: string): Promise<T> {
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
async function followNodes(
  cluster: Cluster,
  warn: (line: string) => void,
  where: string,
): Promise<NodeCache | undefined> {
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
    throw err instanceof KubeError ? kubeErrorToKwave(err, `listing the nodes${where}`) : err;
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
