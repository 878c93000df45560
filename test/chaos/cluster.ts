// What the chaos harness needs of a cluster, whichever backend serves it: the scenario's world,
// its chaos (another writer, deletions, a node fault, the backend's own faults), a change feed and
// the final state — read from the cluster itself, never from kwave's output.
import type { KubeObject } from '../../src/sim/store.js';
import type { Scenario } from './scenario.js';

export const NAMESPACE = 'default';
/** The plan's rollout record (ConfigMap) and run Lease. */
export const RECORD_NAME = 'kwave-chaos';

/** One change the cluster went through, as its store (embedded) or a watch of the API (real) saw it. */
export interface ClusterChange {
  resource: 'pods' | 'leases' | 'nodes';
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
}

/** The cluster after the last run, everything read from the API server (or the embedded store). */
export interface FinalState {
  /** The selected pods (label app=demo) that still exist. */
  pods: KubeObject[];
  record: KubeObject | undefined;
  lease: KubeObject | undefined;
  /** The most selected pods not Ready at once since the scenario began. */
  maxNotReady: number;
  /**
   * Per pod: image patches by kwave that the API server accepted (2xx), from its audit log;
   * undefined where the backend keeps none (embedded: the store's change feed stands in).
   */
  imagePatches: Map<string, number> | undefined;
  /** Patches admission refused (the scenario's admissionRefusal); 0 where none was set. */
  patchesRefused: number;
}

export interface ChaosCluster {
  kubeconfigPath: string;
  /** The selected pods as the cluster holds them now. */
  selectedPods(): Promise<KubeObject[]>;
  lease(): Promise<KubeObject | undefined>;
  record(): Promise<KubeObject | undefined>;
  /** Another controller's write: a label or an annotation, guarded by the version read (false: it lost a race). */
  touchPod(
    pod: KubeObject,
    change: { labels: Record<string, string> } | { annotations: Record<string, string> },
  ): Promise<boolean>;
  deletePod(name: string): Promise<void>;
  /** An eviction: the pod deleted gracefully (embedded: the DELETE an admitted eviction makes; real: the Eviction API). False when refused or gone. */
  evictPod(name: string, graceSeconds: number): Promise<boolean>;
  /** The pod's container exits (code 1) and its kubelet restarts it. False when none was running. */
  crashContainer(name: string): Promise<boolean>;
  /** The Node object deleted through the API; its pods are left to the pod GC. */
  deleteNode(node: string): Promise<void>;
  /** Every watch event of kwave's this many ms late (embedded: its API server's fault; real: the fault proxy, when the scenario has a slow watch; 0 ends it). */
  setWatchDelay?(ms: number): void;
  /** Ends kwave's open watch streams (real, through the fault proxy); returns how many. */
  cutWatches?(): number;
  /** The node fault: its kubelet silent (embedded: NotReady at once; real: the node-lifecycle controller notices). */
  setNodeReady(node: string, ready: boolean): Promise<void>;
  /** Admission refuses every patch of `pod` with `code` (embedded only: the simulator's admission rules). */
  refusePatch?(pod: string, code: 403 | 422): void;
  /** Calls `listener` with every change of the namespace's pods and Leases, and of the nodes. */
  subscribe(listener: (change: ClusterChange) => void): () => void;
  /** Starts counting (not-Ready pods, requests) from now. */
  resetStats(): Promise<void>;
  /**
   * The backend's own faults of the scenario, on timers from now (none on embedded: its API faults
   * are set at start); resolves once the last of them is over (the API server answers again).
   */
  startBackendFaults(s: Scenario, timers: NodeJS.Timeout[]): Promise<void>;
  /** Marks that a batch of `runners` kwave processes starts now (for per-run request counts). */
  runnersStarting(runners: number): void;
  /** The batch ended: this many distinct runners held the Lease meanwhile. */
  runnersRan(holders: number): void;
  final(): Promise<FinalState>;
  /** What the backend measured about its faults, for the scenario's line (e.g. 410s seen). */
  faultReport(): BackendFaultReport;
  close(): Promise<void>;
}

export interface BackendFaultReport {
  /** Watches of the harness's own observer answered 410 Gone (its resume came too late for the cache). */
  observer410: number;
  /** kwave's pod re-lists beyond one list per runner that held the Lease (a lower bound of its 410s), from the audit log. */
  kwaveRelists: number;
  /** Faults that failed to take place (e.g. the apiserver did not come back), as messages. */
  problems: string[];
  /** Real, through the fault proxy: kwave's watch chunks held back, and its watch streams cut. */
  slowWatch?: { delayedChunks: number; cuts: number };
}

export function isSelected(pod: KubeObject): boolean {
  return (pod.metadata.labels as Record<string, string> | undefined)?.app === 'demo';
}

export function gateOf(pod: KubeObject): string | undefined {
  const conditions = (pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === 'kwave.dev/in-place-ready')?.status;
}

interface ContainerStatus {
  imageID: string;
  restartCount: number;
  image: string;
  state?: { running?: object; waiting?: { reason?: string } };
}

export function containerStatus(pod: KubeObject): ContainerStatus | undefined {
  return (
    pod.status as { containerStatuses?: (ContainerStatus & { name: string })[] } | undefined
  )?.containerStatuses?.find((c) => c.name === 'nginx');
}

export function specImage(pod: KubeObject): string {
  return (
    (pod.spec as { containers: { name: string; image: string }[] }).containers.find((c) => c.name === 'nginx')?.image ??
    ''
  );
}

export function holderOf(lease: KubeObject | undefined): string {
  return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '';
}

/** A node counts as unable to act once it is not Ready or carries the node-lifecycle controller's taints. */
export function nodeCannotAct(node: KubeObject): boolean {
  const ready = (node.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
    (c) => c.type === 'Ready',
  )?.status;
  const taints = (node.spec as { taints?: { key: string }[] } | undefined)?.taints ?? [];
  return (
    ready !== 'True' ||
    taints.some((t) => t.key === 'node.kubernetes.io/unreachable' || t.key === 'node.kubernetes.io/not-ready')
  );
}
