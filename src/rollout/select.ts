// From a plan and the pods the cluster holds to the work of a rollout: which pods are selected,
// which are already at the target, which are in flight from an earlier run, what would refuse
// the run, and the waves. Pure: `kwave plan` prints it, `kwave run` carries it out.
import type { V1Pod } from '@kubernetes/client-node';
import type { Plan } from '../plan/types.js';
import { ownedBy, readState } from '../inplace/state.js';
import { gateOwner } from '../inplace/decide.js';
import { declaresGate, podKey, specContainer, type PodName } from '../inplace/podView.js';
import { resolveBudget, resolveMaxFailed } from './budget.js';
import { orderPods } from './order.js';
import { isAtTarget } from '../inplace/atTarget.js';
import { resizeQosChange } from '../inplace/resources.js';
import { matchesSelector } from './labelSelector.js';
import { partitionWaves, type WavePartition } from './waves.js';

export interface SelectedPod {
  namespace: string;
  name: string;
  uid: string;
  node?: string;
  zone?: string;
  /** The pod as selected; the runner puts the cache's view here once the pod's flow ends (podRunner.ts). */
  pod: V1Pod;
}

export type ProblemKind =
  | 'empty-selection'
  | 'gate-missing'
  | 'container-missing'
  /** A resize that would change the pod's QoS class, which the API server refuses (error). */
  | 'qos-change'
  | 'other-revision'
  | 'other-plan'
  /** A pod's owner (rollout/owners.ts): replacements would run the old image, or owners: update is refused. */
  | 'owner'
  | 'terminating'
  /** A PodDisruptionBudget never allows a disruption: the rollout would wait forever (error). */
  | 'pdb-never'
  /** A PodDisruptionBudget allows none now: pods wait (warning). */
  | 'pdb-blocked'
  /** PDBs could not be read (forbidden): they are not respected (warning). */
  | 'pdb-unknown'
  /** This revision's last run halted: `kwave run` carries the halt on and upgrades nothing (warning; `--retry` lifts it). */
  | 'halted';

export interface PodProblem {
  kind: ProblemKind;
  /** `namespace/name`, or undefined for a problem of the whole selection. */
  pod?: string;
  /** Errors refuse the run (exit 2); warnings are shown. */
  severity: 'error' | 'warning';
  message: string;
  /** For `other-revision`: the revision the pod is mid-flight under. */
  revision?: string;
}

export interface FleetSelection {
  /** Every pod the selector matches in the target namespaces (terminating ones left out). */
  selected: SelectedPod[];
  /** Already at the target images. */
  done: SelectedPod[];
  /** Not at target, in rollout order; pods this revision left mid-flow come first. */
  todo: SelectedPod[];
  /** Pods of `todo` that carry this revision's state from an earlier run. */
  resumed: SelectedPod[];
  /**
   * Pods the selector matches that are being deleted, left out: until gone they hold the budget
   * while not Ready, as in the run that saw them go and as a PodDisruptionBudget counts them.
   */
  leaving: LeavingPod[];
  partition: WavePartition<SelectedPod>;
  problems: PodProblem[];
  /** `maxUnavailable` in pods. */
  budget: number;
  /** `failurePolicy.maxFailed` in pods. */
  maxFailed: number;
}

const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** The zone of each node by name, from its `topology.kubernetes.io/zone` label. */
export type NodeZones = ReadonlyMap<string, string>;

export function zonesOf(
  nodes: readonly { metadata?: { name?: string; labels?: Record<string, string> } }[],
): Map<string, string> {
  const zones = new Map<string, string>();
  for (const n of nodes) {
    const zone = n.metadata?.labels?.[ZONE_LABEL];
    if (n.metadata?.name && zone) zones.set(n.metadata.name, zone);
  }
  return zones;
}

/** A pod the plan targets, read once: what the selection needs of it, before any ordering. */
interface ClassifiedPod {
  namespace: string;
  name: string;
  uid: string;
  node?: string;
  pod: V1Pod;
  atTarget: boolean;
  /** Not at target and carries this revision's state from an earlier run (a pod it left mid-flow, or failed). */
  resumes: boolean;
  /** The pod's own problems (gate, containers, another run's state); undefined when none. */
  problems?: PodProblem[];
}

/** What the selection takes from the pods, in the order they were listed; pages of a list append theirs. */
export interface FleetIntake {
  pods: ClassifiedPod[];
  /** Pods left out with a warning (terminating), in list order. */
  problems: PodProblem[];
  leaving: LeavingPod[];
}

type LeavingPod = PodName & { pod: V1Pod };

/**
 * Classifies the pods the plan targets; `pods` may hold pods of other namespaces or labels, which
 * are passed over. `keep` picks what of each pod the selection holds on to (default: all of it):
 * a caller that reads little of the pods afterwards keeps less of 50,000 of them.
 */
export function intakeOf(plan: Plan, pods: readonly V1Pod[], keep: (pod: V1Pod) => V1Pod = (pod) => pod): FleetIntake {
  const namespaces = new Set(plan.target.namespaces);
  const intake: FleetIntake = { pods: [], problems: [], leaving: [] };
  for (const pod of pods) {
    const md = pod.metadata;
    if (!md?.name || !md.namespace || !namespaces.has(md.namespace)) continue;
    if (!matchesSelector(plan.target.selector, md.labels)) continue;
    const key = podKey(pod);
    if (md.deletionTimestamp) {
      intake.problems.push({
        kind: 'terminating',
        pod: key,
        severity: 'warning',
        message: `${key} is being deleted; left out`,
      });
      intake.leaving.push({ namespace: md.namespace, name: md.name, pod: keep(pod) });
      continue;
    }
    const node = pod.spec?.nodeName;
    const problems = podProblems(plan, pod, key);
    const atTarget = isAtTarget(pod, plan);
    intake.pods.push({
      namespace: md.namespace,
      name: md.name,
      uid: md.uid ?? '',
      ...(node ? { node } : {}),
      pod: keep(pod),
      atTarget,
      resumes: !atTarget && isOwnInFlight(plan, pod),
      ...(problems.length > 0 ? { problems } : {}),
    });
  }
  return intake;
}

/**
 * Selects and plans a rollout. `pods` may hold pods of other namespaces or labels: only those the
 * plan targets are taken. Deterministic for the same input.
 */
export function selectFleet(plan: Plan, pods: readonly V1Pod[], zones: NodeZones = new Map()): FleetSelection {
  return assembleSelection(plan, intakeOf(plan, pods), zones);
}

/** The selection from its intake: the pods in rollout order, done or to do, their problems in that order, the waves. */
export function assembleSelection(plan: Plan, intake: FleetIntake, zones: NodeZones = new Map()): FleetSelection {
  const problems: PodProblem[] = [...intake.problems];
  const selected: SelectedPod[] = [];
  const facts = new Map<SelectedPod, ClassifiedPod>();
  for (const c of intake.pods) {
    const { namespace, name, uid, node, pod } = c;
    const zone = node ? zones.get(node) : undefined;
    // Spelled out, not spread: the spreads made two objects a pod more, 50,000 at once.
    const s: SelectedPod = !node
      ? { namespace, name, uid, pod }
      : zone
        ? { namespace, name, uid, node, zone, pod }
        : { namespace, name, uid, node, pod };
    selected.push(s);
    facts.set(s, c);
  }
  if (selected.length === 0) {
    problems.push({
      kind: 'empty-selection',
      severity: 'error',
      message: `no pod in namespace${plan.target.namespaces.length > 1 ? 's' : ''} ${plan.target.namespaces.join(', ')} matches the selector`,
    });
  }

  const done: SelectedPod[] = [];
  const todo: SelectedPod[] = [];
  const resumed: SelectedPod[] = [];
  for (const s of orderPods(selected, plan.strategy.order)) {
    const c = facts.get(s)!;
    if (c.problems) problems.push(...c.problems);
    if (c.atTarget) done.push(s);
    else if (c.resumes) resumed.push(s);
    else todo.push(s);
  }
  const ordered = [...resumed, ...todo];
  return {
    selected,
    done,
    todo: ordered,
    resumed,
    leaving: intake.leaving,
    partition: partitionWaves(ordered, done.length, plan.strategy.waves),
    problems,
    budget: resolveBudget(plan.strategy.maxUnavailable, selected.length),
    maxFailed: resolveMaxFailed(plan.failurePolicy.maxFailed, selected.length),
  };
}

/** Carries this plan revision's upgrade state: a pod an earlier run left mid-flow (or failed). */
function isOwnInFlight(plan: Plan, pod: V1Pod): boolean {
  const st = readState(pod);
  if (st.kind === 'ok') return ownedBy(st.state, plan.name, plan.revision);
  const owner = gateOwner(pod, plan.readinessGate.conditionType);
  return ownedBy(owner, plan.name, plan.revision);
}

function podProblems(plan: Plan, pod: V1Pod, key: string): PodProblem[] {
  const problems: PodProblem[] = [];
  const gate = plan.readinessGate.conditionType;
  if (!declaresGate(pod, gate)) {
    problems.push(
      plan.readinessGate.required
        ? {
            kind: 'gate-missing',
            pod: key,
            severity: 'error',
            message: `${key} does not declare the readiness gate ${gate}`,
          }
        : {
            kind: 'gate-missing',
            pod: key,
            severity: 'warning',
            message: `${key} does not declare the readiness gate ${gate}: it will be upgraded without draining`,
          },
    );
  }
  const missing = plan.update.containers.filter((c) => !specContainer(pod, c.name)).map((c) => c.name);
  if (missing.length > 0) {
    problems.push({
      kind: 'container-missing',
      pod: key,
      severity: 'error',
      message: `${key} has no container named ${missing.join(', ')}`,
    });
  }
  const qos = resizeQosChange(plan, pod);
  if (qos) {
    problems.push({
      kind: 'qos-change',
      pod: key,
      severity: 'error',
      message: `${key}: the resize would change its QoS class from ${qos.from} to ${qos.to}, which Kubernetes refuses`,
    });
  }
  const st = readState(pod);
  const owner = gateOwner(pod, gate);
  const other = st.kind === 'ok' ? st.state : owner;
  const inFlight = owner !== undefined; // a kwave flow holds the gate closed right now
  if (other && inFlight && !ownedBy(other, plan.name, plan.revision)) {
    problems.push(
      other.plan === plan.name
        ? {
            kind: 'other-revision',
            pod: key,
            severity: 'error',
            revision: other.revision,
            message: `${key} is mid-flight under revision ${other.revision} of this plan (now ${plan.revision}); finish it with that plan, or use --force`,
          }
        : { kind: 'other-plan', pod: key, severity: 'error', message: `${key} is mid-flight under plan ${other.plan}` },
    );
  }
  return problems;
}
