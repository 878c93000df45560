// Which pods a rollback reverts, and in which order. Pure: from the pods the cache holds.
import type { V1Pod } from '@kubernetes/client-node';
import type { Plan } from '../plan/types.js';
import { conditionStatus, podKey } from '../inplace/podView.js';
import { ownedBy, readState } from '../inplace/state.js';
import { isAtTarget } from '../inplace/atTarget.js';
import { gateOwner } from '../inplace/decide.js';
import type { SelectedPod } from './select.js';

export interface RollbackTarget extends SelectedPod {
  /** The wave the pod was upgraded in: rollbacks run last wave first. */
  wave: number;
}

type PlanPart = Pick<Plan, 'name' | 'revision' | 'readinessGate' | 'target'>;

/**
 * Pods to revert for `kwave rollback`, last wave first (then by name): those carrying this
 * revision's upgrade state, those a killed rollback left with the gate still closed, and those
 * this revision's upgrade drained but never patched (a flow stopped by a node that could not act,
 * or by a kill): for them, reverting is reopening the gate, and they come last. Pods whose
 * rollback reopened the gate are done and left alone (reverting them again would count them
 * twice).
 */
export function upgradedByRevision(pods: readonly V1Pod[], plan: PlanPart): RollbackTarget[] {
  const out: RollbackTarget[] = [];
  for (const pod of pods) {
    const st = readState(pod);
    const md = pod.metadata;
    if (!md?.name || !md.namespace) continue;
    if (st.kind === 'absent') {
      const owner = gateOwner(pod, plan.readinessGate.conditionType);
      const drainedByUs =
        owner !== undefined && ownedBy(owner, plan.name, plan.revision) && owner.direction === 'upgrade';
      if (drainedByUs && !md.deletionTimestamp && plan.target.namespaces.includes(md.namespace))
        out.push({ namespace: md.namespace, name: md.name, uid: md.uid ?? '', pod, wave: 0 });
      continue;
    }
    if (st.kind !== 'ok') continue;
    if (!ownedBy(st.state, plan.name, plan.revision)) continue;
    if (st.state.direction === 'rollback' && conditionStatus(pod, plan.readinessGate.conditionType) === 'True')
      continue;
    if (!plan.target.namespaces.includes(md.namespace)) continue;
    out.push({ namespace: md.namespace, name: md.name, uid: md.uid ?? '', pod, wave: st.state.wave });
  }
  return out.sort((a, b) => b.wave - a.wave || podKey(a).localeCompare(podKey(b)));
}

/**
 * What `failurePolicy.rollback` reverts after a halt, once no flow runs: with `all`, every pod
 * this revision upgraded; with `failed`, those of them that failed, and, whatever the scope,
 * every one it still holds out of service (gate False): drained and not patched, or patched and
 * not finished — a killed run left it, it was queued for its start, or its node could not act
 * when the halt came. Nothing else in this run would finish it, and a half-done upgrade of a
 * halted revision goes back. Pods that failed before their image patch (a drain that never
 * ended) carry no state but keep their gate closed; they come last, in `currentWave`, and the
 * rollback flow reopens their gate.
 */
export function rollbackTargets(
  pods: readonly V1Pod[],
  plan: PlanPart,
  scope: 'failed' | 'all',
  failed: ReadonlySet<string>,
  currentWave: number,
): RollbackTarget[] {
  const upgraded = upgradedByRevision(pods, plan);
  const heldOut = (p: RollbackTarget) => conditionStatus(p.pod, plan.readinessGate.conditionType) === 'False';
  const out = upgraded.filter((p) => scope === 'all' || failed.has(podKey(p)) || heldOut(p));
  const known = new Set(upgraded.map(podKey));
  const byKey = new Map(pods.map((p) => [podKey(p), p]));
  for (const key of failed) {
    if (known.has(key)) continue;
    const pod = byKey.get(key);
    const md = pod?.metadata;
    if (pod && md?.name && md.namespace)
      out.push({ namespace: md.namespace, name: md.name, uid: md.uid ?? '', pod, wave: currentWave });
  }
  return out;
}

/**
 * For carrying on a halt a killed run left unfinished: the upgrades it had in flight — pods
 * carrying this revision's upgrade state, or held drained by this revision's upgrade before its
 * patch — that are not at the target yet. They finish as they would have in that run. Pods under
 * this revision's rollback state are not among them: a rollback is never followed by an upgrade.
 */
export function inFlightUpgrades(
  pods: readonly V1Pod[],
  plan: PlanPart & Pick<Plan, 'update'>,
  haltWave: number,
): RollbackTarget[] {
  const out: RollbackTarget[] = [];
  for (const pod of pods) {
    const md = pod.metadata;
    if (!md?.name || !md.namespace || !plan.target.namespaces.includes(md.namespace) || md.deletionTimestamp) continue;
    if (isAtTarget(pod, plan)) continue;
    const st = readState(pod);
    const owner = gateOwner(pod, plan.readinessGate.conditionType);
    const ownUpgrade =
      st.kind === 'ok'
        ? ownedBy(st.state, plan.name, plan.revision) && st.state.direction === 'upgrade'
        : owner !== undefined &&
          ownedBy(owner, plan.name, plan.revision) &&
          owner.direction === 'upgrade' &&
          conditionStatus(pod, plan.readinessGate.conditionType) === 'False';
    if (ownUpgrade)
      out.push({
        namespace: md.namespace,
        name: md.name,
        uid: md.uid ?? '',
        pod,
        wave: st.kind === 'ok' ? st.state.wave : haltWave,
      });
  }
  return out.sort((a, b) => a.wave - b.wave || podKey(a).localeCompare(podKey(b)));
}

/** Pods whose rollback under this revision has not reopened the gate yet: the rollback must finish them whatever its scope. */
export function unfinishedRollbacks(pods: readonly V1Pod[], plan: PlanPart): string[] {
  return upgradedByRevision(pods, plan)
    .filter((p) => {
      const st = readState(p.pod);
      return st.kind === 'ok' && st.state.direction === 'rollback';
    })
    .map(podKey);
}

/** Pods grouped by the wave they were upgraded in, in the order given. */
export function byWave(pods: readonly RollbackTarget[]): Map<number, SelectedPod[]> {
  const groups = new Map<number, SelectedPod[]>();
  for (const p of pods) {
    const group = groups.get(p.wave);
    if (group) group.push(p);
    else groups.set(p.wave, [p]);
  }
  return groups;
}
