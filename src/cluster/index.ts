// kwave's access to Kubernetes: connect, requests, retries, request counts, the pod cache.
export {
  connect,
  configSourceOf,
  chooseConfigSource,
  loadKubeConfig,
  selectContext,
  type ConnectOptions,
  type ConfigSource,
} from './connect.js';
export {
  Cluster,
  type AccessAnswer,
  type AccessQuestion,
  realClusterDeps,
  type ClusterDeps,
  type ClusterOptions,
  type ConfigMapMergePatch,
  type ListPodsOptions,
  type NodeList,
  type NodeWatchEvent,
  type WatchNodesQuery,
  type PodList,
  type PodWatchEvent,
  type WatchHandle,
  type WatchPodsQuery,
} from './cluster.js';
export type { PageSink } from './pagedList.js';
export {
  loadInClusterConfig,
  serviceAccountDir,
  TokenFileAuth,
  SERVICE_ACCOUNT_DIR,
  SERVICE_ACCOUNT_DIR_ENV,
} from './inCluster.js';
export {
  KubeError,
  toKubeError,
  kubeErrorFromResponse,
  kubeErrorToKwave,
  wrapKube,
  isForbidden,
  withTarget,
  describeTarget,
  forbiddenMessage,
  type RequestTarget,
} from './kubeError.js';
export { NodeCache, type NodeCacheOptions, type NodeEntry, type NodeSource } from './nodeCache.js';
export {
  PodCache,
  type PodCacheOptions,
  type PodChange,
  type PodChangeType,
  type PodSource,
  type WaitOptions,
  type WaitResult,
  type PodCacheStats,
} from './podCache.js';
export {
  RequestCounter,
  type KubeResource,
  type KubeVerb,
  type RequestListener,
  type RequestRecord,
} from './requestCounter.js';
export {
  DEFAULT_RATE_LIMIT,
  TokenBucket,
  chooseRateLimit,
  type RateLimit,
  type RateLimitSources,
} from './rateLimit.js';
export { DEFAULT_RETRY_POLICY, backoffDelay, isRetryable, retryDelay, withRetry, type RetryPolicy } from './retry.js';
export { realSleep, type Sleep } from '../sleep.js';
export { compareResourceVersions, isKnownNewer, isKnownOlder } from './resourceVersion.js';
export {
  conditionPatchBody,
  eventBody,
  type ConditionStatus,
  type EventSpec,
  type InvolvedObject,
  type PodConditionPatch,
} from './requestBodies.js';
export {
  WORKLOAD_RESOURCES,
  checkWorkloadPatch,
  decodeWorkload,
  isWorkloadKind,
  patchWorkload,
  readWorkload,
  type WorkloadKind,
  type WorkloadView,
} from './owners.js';
export type { WorkloadResource } from './requestCounter.js';
