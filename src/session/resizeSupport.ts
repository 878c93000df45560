// Refuses a resize plan on an API server without in-place resize (`pods/resize`, Kubernetes
// 1.33+), found by discovery before any write: exit 2 with what is missing.
import type { Cluster } from '../cluster/index.js';
import { ExitCode, KwaveError } from '../errors.js';
import { resizesAny } from '../inplace/changes.js';
import type { Plan } from '../plan/types.js';

/** Throws (exit 2) when the plan resizes and the server does not serve `pods/resize`. */
export async function refuseUnservedResize(cluster: Pick<Cluster, 'servesPodResize'>, plan: Plan): Promise<void> {
  if (!resizesAny(plan.update.containers)) return;
  if (await cluster.servesPodResize()) return;
  throw new KwaveError(
    'REFUSED',
    `plan ${plan.name} resizes containers (spec.update.containers[].resources), but the API server does not serve pods/resize: in-place resize needs Kubernetes 1.33 or later with the InPlacePodVerticalScaling feature on`,
    ExitCode.BAD_INPUT,
  );
}
