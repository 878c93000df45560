// Writes a remote-control request (control.ts) into the record ConfigMap: GET it, decide, PUT it
// back carrying the resourceVersion it was read at, so a write by the runner (or another command)
// in between makes it 409 and it reads and decides again. It never takes the run's lease: it
// must work while a runner holds it. Touches the record ConfigMap only.
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Cluster } from '../cluster/cluster.js';
import { KubeError } from '../cluster/kubeError.js';
import { CONTROL_KEY, decodeControl, encodeControl, type ControlDecision, type ControlState } from './control.js';
import { recordName } from './record.js';

export type ControlApi = Pick<Cluster, 'getConfigMap' | 'updateConfigMap'>;

/** 409s in a row before giving up: each means someone wrote the record in between. */
const MAX_CONFLICTS = 8;

export type ControlWrite =
  /** No record: the plan was never run in that namespace. */
  { kind: 'not-run' } | { kind: 'decided'; decision: ControlDecision; written: boolean };

/**
 * Reads the record, asks `decide` what the request does to its control state, and writes the new
 * state with a guarded update when it changed. `decide` may run more than once (after a 409).
 */
export async function writeControl(
  cluster: ControlApi,
  namespace: string,
  plan: string,
  decide: (state: ControlState, cm: V1ConfigMap) => Promise<ControlDecision> | ControlDecision,
): Promise<ControlWrite> {
  const name = recordName(plan);
  for (let conflicts = 0; ;) {
    let cm: V1ConfigMap;
    try {
      cm = await cluster.getConfigMap(namespace, name);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return { kind: 'not-run' };
      throw err;
    }
    const decision = await decide(decodeControl(cm.data?.[CONTROL_KEY]).state, cm);
    if (!decision.ok || !decision.changed) return { kind: 'decided', decision, written: false };
    const body: V1ConfigMap = {
      ...cm,
      metadata: { ...cm.metadata, name, namespace, resourceVersion: cm.metadata?.resourceVersion },
      data: { ...cm.data, [CONTROL_KEY]: encodeControl(decision.state) },
    };
    try {
      await cluster.updateConfigMap(namespace, body);
      return { kind: 'decided', decision, written: true };
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return { kind: 'not-run' };
      if (!(err instanceof KubeError && err.code === 409) || ++conflicts > MAX_CONFLICTS) throw err;
    }
  }
}
