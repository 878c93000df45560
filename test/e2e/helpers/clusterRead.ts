// What a test reads back from the cluster, through the API server as any client would (HTTPS,
// the kubeconfig's CA and token, @kubernetes/client-node, not kwave's own cluster module and not
// the simulator's in-process store), so the same assertion holds against a real kube-apiserver.
import { CoreV1Api, KubeConfig, type CoreV1Event, type V1Node, type V1Pod } from '@kubernetes/client-node';

export interface ClusterReader {
  /** The pods of `namespace` matching `labelSelector`. */
  pods(namespace: string, labelSelector?: string): Promise<V1Pod[]>;
  /** The Events of `namespace` about the object `name` (all of them when no name is given). */
  events(namespace: string, name?: string): Promise<CoreV1Event[]>;
  /** Every node of the cluster. */
  nodes(): Promise<V1Node[]>;
}

export function clusterReader(kubeconfigPath: string): ClusterReader {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  return {
    pods: async (namespace, labelSelector) =>
      (await core.listNamespacedPod({ namespace, ...(labelSelector ? { labelSelector } : {}) })).items,
    events: async (namespace, name) =>
      (await core.listNamespacedEvent({ namespace, ...(name ? { fieldSelector: `involvedObject.name=${name}` } : {}) }))
        .items,
    nodes: async () => (await core.listNode()).items,
  };
}
