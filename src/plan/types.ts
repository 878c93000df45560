// The normalized plan: defaults applied, durations in milliseconds, percentages as fractions.
// Produced by the loader (src/plan/load.ts); everything downstream reads only this.

/** A count of pods, either absolute or a share of the selected pods (0..1). */
export type Amount = { kind: 'count'; value: number } | { kind: 'fraction'; value: number };

interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** CPU and memory quantities as the plan writes them (`250m`, `256Mi`); the only resources resized in place. */
export interface CpuMemory {
  cpu?: string;
  memory?: string;
}

/** Target requests and limits of one container; a resource left out keeps its value. */
export interface ResourceTarget {
  requests?: CpuMemory;
  limits?: CpuMemory;
}

/** One container's target: a new image, new resources (resized through `pods/resize`), or both. */
export interface ContainerUpdate {
  name: string;
  image?: string;
  resources?: ResourceTarget;
}

/** `whenRestarting`: drain only pods whose change restarts a container; `always`: every pod. */
export type DrainPolicy = 'always' | 'whenRestarting';

export type Order = 'name' | 'spread-nodes' | 'spread-zones';

/** One cluster of a multi-cluster plan: its name in kwave's output and metrics, and its kubeconfig context. */
interface PlanCluster {
  name: string;
  context: string;
}

/** sequential: every wave in one cluster, then the next; interleaved: wave i in every cluster before wave i+1. */
export type ClusterOrder = 'sequential' | 'interleaved';

/** Wave targets: cumulative targets, or equal waves of one size. */
export type WaveSpec = { kind: 'targets'; targets: Amount[] } | { kind: 'size'; size: Amount };

export interface PrometheusGate {
  address: string;
  query: string;
  successCondition?: string;
  failureCondition?: string;
  initialDelayMs: number;
  intervalMs: number;
  count: number;
  failureLimit: number;
  inconclusiveLimit: number;
  consecutiveErrorLimit: number;
  noData: 'pass' | 'fail' | 'inconclusive';
  timeoutMs: number;
  /** Measure and record, never halt: a failure is reported as what would have happened. */
  dryRun: boolean;
  /** 0: off; N: N successful measurements in a row pass the gate (see gates/prometheusDecision.ts). */
  consecutiveSuccessLimit: number;
  /** Bearer token source: never inline. */
  auth?: BearerAuth;
}

/** Where a gate reads its bearer token when it runs: an environment variable or a file, never the plan. */
export interface BearerAuth {
  bearerTokenEnv?: string;
  bearerTokenFile?: string;
}

/**
 * Where a webhook gate's or notification receiver's URL comes from: exactly one of the three. The
 * URL is a credential for some services (a Slack webhook's path): `urlEnv` and `urlFile` keep it
 * out of the plan (and the record, which stores the plan's text), read when it is used.
 */
export interface UrlSource {
  url?: string;
  /** Name of the environment variable that holds the URL. */
  urlEnv?: string;
  /** Path of a file that holds the URL (e.g. a mounted Secret). */
  urlFile?: string;
}

export interface WebhookGate extends UrlSource {
  timeoutMs: number;
  retries: number;
  /** Bearer token source: never inline. */
  auth?: BearerAuth;
}

export type NotifyEventKind = 'started' | 'wave-completed' | 'gate' | 'halted' | 'completed' | 'rolled-back';

/** A receiver of notifications (`spec.notify[]`): POSTed to in the background, never holding up the rollout. */
export interface NotifyTarget extends UrlSource {
  /** The events it gets, in the plan's order without repeats. */
  on: NotifyEventKind[];
  format: 'json' | 'slack';
  /** Per attempt. */
  timeoutMs: number;
  /** Bearer token source: never inline. */
  auth?: BearerAuth;
}

export interface Gate {
  name: string;
  /** 1-based wave numbers after which the gate is checked; undefined = every wave but the last. */
  afterWaves?: number[];
  pauseMs: number;
  approval: boolean;
  prometheus?: PrometheusGate;
  webhook?: WebhookGate;
}

export interface Window {
  timezone: string;
  /** Parsed `"Mon-Fri 02:00-05:00"` entries: days 0=Sun..6=Sat, minutes from midnight. */
  allow: { days: number[]; startMinute: number; endMinute: number; text: string }[];
}

export interface Plan {
  apiVersion: 'kwave.dev/v1alpha1';
  kind: 'RolloutPlan';
  name: string;
  /** Stable hash of the normalized spec (key order and defaults do not change it). */
  revision: string;
  target: { namespaces: string[]; selector: LabelSelector };
  update: { containers: ContainerUpdate[] };
  readinessGate: { conditionType: string; required: boolean };
  strategy: {
    waves: WaveSpec;
    concurrency: number;
    /** Default: the concurrency, as a count. */
    maxUnavailable: Amount;
    order: Order;
    drainMs: number;
    /** Which pods are drained before their change (default `whenRestarting`). */
    drain: DrainPolicy;
    podTimeoutMs: number;
    minReadyMs: number;
    /** How long a node may read NotReady before the run leaves its pods (default 30 s); outside the revision. */
    nodeGraceMs: number;
    /** Hold pods back while draining them would break a PodDisruptionBudget. Default true. */
    respectPodDisruptionBudgets: boolean;
    /** Pull each wave's target images on its nodes before draining. Default false. */
    prePull: boolean;
    /** Nodes pre-pulling at once. Default 5. */
    prePullConcurrency: number;
    /** Client-side API rate limit, when the plan sets one (the CLI flags win); outside the revision. */
    kubeApiQps?: number;
    kubeApiBurst?: number;
  };
  failurePolicy: {
    maxFailed: Amount;
    rollback: 'none' | 'failed' | 'all';
    /** Pods whose node stopped reporting mid-flight (NodeNotReady) count toward maxFailed. Default false. */
    countNodeFailures: boolean;
  };
  /** `warn`: say that recreated pods would run the old image; `update`: keep OnDelete StatefulSet/DaemonSet templates in step. */
  owners: 'warn' | 'update';
  /**
   * Namespace of the ConfigMap `kwave-<plan>-control` that holds people's decisions (`kwave
   * approve`, `pause`, `resume`, `abort`); default the record's (the first target namespace).
   * Outside the revision: where decisions are kept does not change what the rollout does.
   */
  controlNamespace: string;
  gates: Gate[];
  window?: Window;
  metrics: { pushgateway?: string };
  /** Notification receivers; outside the revision (where to report does not change what the rollout does). */
  notify: NotifyTarget[];
  /**
   * The clusters of a multi-cluster plan, in the listed order, with how the waves go across them;
   * undefined for a plan of one cluster (the `--context` one). Outside the revision.
   */
  clusters?: { list: PlanCluster[]; order: ClusterOrder };
  /** Where the plan came from, for messages. */
  source: { file: string; text: string };
}
