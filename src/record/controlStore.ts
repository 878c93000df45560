// Writes people's decisions (approvals, pause/resume/abort requests) into the decisions ConfigMap
// `kwave-<plan>.control` (record.ts): GET it, decide, then create it or PUT it back carrying the
// resourceVersion it was read at, so a write by another command in between makes it 409 and it
// reads and decides again. It never takes the run's lease (it must work while a runner holds it),
// and the runner never writes this ConfigMap. Touches that ConfigMap only.
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Cluster } from '../cluster/cluster.js';
import { KubeError } from '../cluster/kubeError.js';
import { CONTROL_KEY, decodeControl, encodeControl, type ControlDecision, type ControlState } from './control.js';
import { recordLabels } from './codec.js';
import { controlName } from './record.js';

export type DecisionsApi = Pick<Cluster, 'getConfigMap' | 'createConfigMap' | 'updateConfigMap'>;

/** 409s in a row before giving up: each means someone wrote the decisions in between. */
const MAX_CONFLICTS = 8;

/** The decisions ConfigMap, or undefined when none was ever written. */
export async function readDecisions(
  cluster: Pick<Cluster, 'getConfigMap'>,
  namespace: string,
  plan: string,
): Promise<V1ConfigMap | undefined> {
  try {
    return await cluster.getConfigMap(namespace, controlName(plan));
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return undefined;
    throw err;
  }
}

/**
 * Reads the decisions' data, asks `change` for the new data (undefined: nothing to write), and
 * writes it: a create when the ConfigMap is not there yet, else a guarded update. `change` may run
 * more than once (after a 409). Resolves with whether it wrote.
 */
export async function updateDecisions(
  cluster: DecisionsApi,
  namespace: string,
  plan: string,
  change: (data: Readonly<Record<string, string>>) => Promise<Record<string, string> | undefined>,
): Promise<boolean> {
  const name = controlName(plan);
  for (let conflicts = 0; ;) {
    const cm = await readDecisions(cluster, namespace, plan);
    const data = await change(cm?.data ?? {});
    if (!data) return false;
    try {
      if (cm)
        await cluster.updateConfigMap(namespace, {
          ...cm,
          metadata: { ...cm.metadata, name, namespace, resourceVersion: cm.metadata?.resourceVersion },
          data,
        });
      else
        await cluster.createConfigMap(namespace, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace, labels: recordLabels(plan) },
          data,
        });
      return true;
    } catch (err) {
      // 409: written (or created) by someone else meanwhile; 404: deleted meanwhile. Read again.
      const again = err instanceof KubeError && (err.code === 409 || err.code === 404);
      if (!again || ++conflicts > MAX_CONFLICTS) throw err;
    }
  }
}

/**
 * A remote-control request: `decide` says what it does to the control state; the new state is
 * written when it changed. `decide` may run more than once (after a 409).
 */
export async function writeControl(
  cluster: DecisionsApi,
  namespace: string,
  plan: string,
  decide: (state: ControlState) => Promise<ControlDecision> | ControlDecision,
): Promise<{ decision: ControlDecision; written: boolean }> {
  let decision: ControlDecision | undefined;
  const written = await updateDecisions(cluster, namespace, plan, async (data) => {
    decision = await decide(decodeControl(data[CONTROL_KEY]).state);
    if (!decision.ok || !decision.changed) return undefined;
    return { ...data, [CONTROL_KEY]: encodeControl(decision.state) };
  });
  return { decision: decision!, written };
}
