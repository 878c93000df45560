// One cluster's part of a run (`kwave run`, `kwave rollback`, the demo, a library's runPlan),
// step 1: connect, check permissions, take the plan's lease, follow the selected pods, the nodes,
// the PDBs, and refuse what must not run (assessment.ts). Nothing is written yet; step 2 is
// clusterRecord.ts. A plan of one cluster has one of these; a multi-cluster plan one per cluster
// (runPlan.ts drives them). Everything it opens is handed to `closers`, to be closed last first.
import { ExitCode, KwaveError } from '../errors.js';
import { NodeCache, PodCache, wrapKube, type Cluster } from '../cluster/index.js';
import type { KwaveMetrics } from '../metrics/registry.js';
import type { Plan } from '../plan/types.js';
import type { OwnerEntry } from '../rollout/owners.js';
import type { ForcedRollback } from '../rollout/runner.js';
import { renderSelector } from '../rollout/labelSelector.js';
import { selectFleet, zonesOf } from '../rollout/select.js';
import { acquireWaiting } from '../lease/acquireWaiting.js';
import { RunLock } from '../lease/runLock.js';
import { rolloutAccessNeeds } from './accessNeeds.js';
import { assessSelection, forcedRollbacks } from './assessment.js';
import { connectFor, type ConnectionOptions } from './connection.js';
import { followDisruptionBudgets, type FollowedBudgets } from './disruptionBudgets.js';
import { followNodes, readZones } from './nodes.js';
import { readOwners } from './owners.js';
import { accessRefusal, accessWarning, checkAccess, selfDecisionWarning } from './preflight.js';
import { refuseUnservedResize } from './resizeSupport.js';
import { prePuller, type PrePuller } from './prePull.js';

export type Closer = () => Promise<unknown> | unknown;

/** What a session may touch of the outside world besides the cluster: its warnings go to `stderr`. */
export interface SessionIO {
  stderr: { write(s: string): unknown };
  env: NodeJS.ProcessEnv;
}

export interface ClusterTarget {
  /** The plan's name for the cluster; undefined for a plan of one cluster. */
  name: string | undefined;
  /** The kubeconfig context; undefined: the current one. */
  context: string | undefined;
}

export interface ClusterOpenOptions {
  io: SessionIO;
  /** The kubeconfig; the context is the target's. */
  connection: ConnectionOptions;
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
  budgets: FollowedBudgets | undefined;
  pullers: PrePuller | undefined;
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
  const { io } = o;
  const { plan, target } = o;
  const where = target.name === undefined ? '' : ` in cluster ${target.name} (context ${target.context})`;
  const cluster = connectFor({ ...o.connection, context: target.context }, io.env, plan);
  o.closers.push(() => cluster.close());
  cluster.requests.onRequest((r) => o.metrics.kubeRequest(r.verb, r.resource, r.code, r.seconds));
  const namespace = plan.target.namespaces[0]!;
  const say = (line: string) =>
    io.stderr.write(`kwave: ${target.name === undefined ? '' : `${target.name}: `}${line}\n`);

  // Permissions first: a missing one refuses the run before the lease or any pod is touched.
  const access = await wrapKube(
    () => checkAccess(cluster, rolloutAccessNeeds(plan)),
    `checking permissions (SelfSubjectRulesReview, SelfSubjectAccessReview)${where}`,
  );
  if (access.denied.length > 0) {
    const refusal = accessRefusal(access.denied);
    throw target.name === undefined
      ? refusal
      : new KwaveError(refusal.code, `cluster ${target.name}: ${refusal.message}`, refusal.exitCode);
  }
  for (const need of access.missingOptional) say(accessWarning(need));
  if (access.checked) {
    const self = await selfDecisionWarning(cluster, plan);
    if (self) say(self);
  }
  await wrapKube(() => refuseUnservedResize(cluster, plan), `asking the API server what it serves${where}`);
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
  const zones = nodes
    ? zonesOf(nodes.list())
    : mayFollowNodes
      ? (await readZones(() => cluster.listNodes(), plan.strategy.order)).zones
      : new Map<string, string>();
  const budgets = mayFollowPdbs ? await followDisruptionBudgets(cluster, plan, cache, say) : undefined;
  if (budgets) o.closers.push(() => budgets.close());
  const pullers = plan.strategy.prePull ? prePuller(cluster, plan, nodes, abort) : undefined;
  if (pullers) o.closers.push(() => pullers.close());

  // Refuse before touching the record: a refused run must not overwrite another revision's.
  const selection = o.direction === 'upgrade' ? selectFleet(plan, cache.list(), zones) : undefined;
  const owners = await readOwners(cluster, plan, selection, cache.list(), unreadableOwners);
  const assessment =
    selection &&
    assessSelection(
      selection,
      {
        ...(budgets ? { budgets: { pdbs: budgets.view.pdbs(), pods: budgets.view.pods() } } : {}),
        owners: owners.entries,
        ownerPatchRefusals: owners.patchRefusals,
      },
      o.force,
    );
  if (selection) {
    for (const e of owners.entries) if (e.action === 'update' || e.action === 'in-step') say(`owner ${e.message}`);
    for (const p of selection.problems)
      if (p.kind === 'owner' && p.severity === 'warning') say(`warning: ${p.message}`);
  }
  const refusal = assessment?.refusal;
  if (refusal)
    throw new KwaveError(
      'REFUSED',
      target.name === undefined ? refusal : `cluster ${target.name}: ${refusal}`,
      ExitCode.BAD_INPUT,
    );
  const forced = selection && o.force ? forcedRollbacks(selection) : undefined;
  return { target, cluster, lock, cache, nodes, budgets, pullers, zones, forced, owners: owners.entries, where, abort };
}
