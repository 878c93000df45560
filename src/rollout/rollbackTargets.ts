// Which pods a rollback reverts, and in which order. Pure: from the pods the cache holds.
import type { V1Pod } from '@kubernetes/client-node';
import type { Plan } from '../plan/types.js';
import { conditionStatus, podKey } from '../inplace/podView.js';
import { ownedBy, readState } from '../inplace/state.js';
import type { SelectedPod } from './select.js';

export interface RollbackTarget extends SelectedPod {
  /** The wave the pod was upgraded in: rollbacks run last wave first. */
  wave: number;
}

type PlanPart = Pick<Plan, 'name' | 'revision' | 'readinessGate' | 'target'>;

/**
 * Pods to revert for `kwave rollback`, last wave first (then by name): those carrying this
 * revision's upgrade state, and those a killed rollback left with the gate still closed. Pods
 * whose rollback reopened the gate are done and left alone (reverting them again would count
 * them twice).
 */
export function upgradedByRevision(pods: readonly V1Pod[], plan: PlanPart): RollbackTarget[] {
  const out: RollbackTarget[] = [];
  for (const pod of pods) {
    const st = readState(pod);
    const md = pod.metadata;
    if (st.kind !== 'ok' || !md?.name || !md.namespace) continue;
    if (!ownedBy(st.state, plan.name, plan.revision)) continue;
    if (st.state.direction === 'rollback' && conditionStatus(pod, plan.readinessGate.conditionType) === 'True') continue;
    if (!plan.target.namespaces.includes(md.namespace)) continue;
    out.push({ namespace: md.namespace, name: md.name, uid: md.uid ?? '', pod, wave: st.state.wave });
  }
  return out.sort((a, b) => b.wave - a.wave || podKey(a).localeCompare(podKey(b)));
}

/**
 * What `failurePolicy.rollback` reverts after a halt: with `all`, every pod this revision
 * upgraded; with `failed`, those of them that failed. Pods that failed before their image patch
 * (a drain that never ended) carry no state but keep their gate closed; they come last, in
 * `currentWave`, and the rollback flow reopens their gate.
 */
export function rollbackTargets(pods: readonly V1Pod[], plan: PlanPart, scope: 'failed' | 'all', failed: ReadonlySet<string>, currentWave: number): RollbackTarget[] {
  const upgraded = upgradedByRevision(pods, plan);
  const out = upgraded.filter((p) => scope === 'all' || failed.has(podKey(p)));
  const known = new Set(upgraded.map(podKey));
  const byKey = new Map(pods.map((p) => [podKey(p), p]));
  for (const key of failed) {
    if (known.has(key)) continue;
    const pod = byKey.get(key);
    const md = pod?.metadata;
    if (pod && md?.name && md.namespace) out.push({ namespace: md.namespace, name: md.name, uid: md.uid ?? '', pod, wave: currentWave });
  }
  return out;
}
