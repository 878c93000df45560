// What the rest of kwave imports of its access to Kubernetes through the folder: connect, the
// client, its errors, the pod and node caches. Other parts are imported from their own files.
export { connect } from './connect.js';
export { Cluster } from './cluster.js';
export type { PageSink } from './pagedList.js';
export { KubeError, kubeErrorToKwave, wrapKube, isForbidden, describeTarget, forbiddenMessage } from './kubeError.js';
export { NodeCache } from './nodeCache.js';
export { PodCache, type WaitOptions, type WaitResult } from './podCache.js';
export { type KubeVerb } from './requestCounter.js';
export { chooseRateLimit } from './rateLimit.js';
export { type PodConditionPatch } from './requestBodies.js';
export {
  WORKLOAD_RESOURCES,
  checkWorkloadPatch,
  isWorkloadKind,
  patchWorkload,
  readWorkload,
  type WorkloadKind,
  type WorkloadView,
} from './owners.js';
