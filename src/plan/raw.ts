// The plan as written, in the shape the schema guarantees once it passes.
// Semantic checks run before the whole plan is known to pass, so they see `Partial<…>` of it.

type RawAmount = number | string;

export interface RawSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

interface RawPrometheus {
  address: string;
  query: string;
  successCondition?: string;
  failureCondition?: string;
  initialDelay?: string;
  interval?: string;
  count?: number;
  failureLimit?: number;
  inconclusiveLimit?: number;
  consecutiveErrorLimit?: number;
  noData?: 'pass' | 'fail' | 'inconclusive';
  timeout?: string;
  dryRun?: boolean;
  consecutiveSuccessLimit?: number;
  auth?: { bearerTokenEnv?: string; bearerTokenFile?: string };
}

/** Exactly one of the three (the schema's oneOf). */
export interface RawUrlSource {
  url?: string;
  urlEnv?: string;
  urlFile?: string;
}

interface RawWebhook extends RawUrlSource {
  timeout?: string;
  retries?: number;
  auth?: { bearerTokenEnv?: string; bearerTokenFile?: string };
}

export interface RawGate {
  name: string;
  afterWaves?: number[];
  pause?: string;
  approval?: boolean;
  prometheus?: RawPrometheus;
  webhook?: RawWebhook;
}

/** The events a notification target can ask for (docs/plan-reference.md, `spec.notify`). */
type NotifyOn = 'started' | 'wave-completed' | 'gate' | 'halted' | 'completed' | 'rolled-back';

export interface RawNotify extends RawUrlSource {
  on?: NotifyOn[];
  format?: 'json' | 'slack';
  timeout?: string;
  auth?: { bearerTokenEnv?: string; bearerTokenFile?: string };
}

export interface RawSpec {
  target: { namespace?: string; namespaces?: string[]; selector: RawSelector };
  update: {
    containers: {
      name: string;
      image?: string;
      resources?: { requests?: { cpu?: string; memory?: string }; limits?: { cpu?: string; memory?: string } };
    }[];
  };
  readinessGate?: { conditionType?: string; required?: boolean };
  /** Absent: `PLAN_DEFAULTS.waves`, every other field its default. */
  strategy?: {
    waves?: RawAmount[];
    waveSize?: RawAmount;
    concurrency?: number;
    maxUnavailable?: RawAmount;
    order?: 'name' | 'spread-nodes' | 'spread-zones';
    drainSeconds?: number;
    drain?: 'always' | 'whenRestarting';
    podTimeout?: string;
    minReadySeconds?: number;
    nodeGraceSeconds?: number;
    respectPodDisruptionBudgets?: boolean;
    prePull?: boolean;
    prePullConcurrency?: number;
    kubeApiQps?: number;
    kubeApiBurst?: number;
  };
  failurePolicy?: { maxFailed?: RawAmount; rollback?: 'none' | 'failed' | 'all'; countNodeFailures?: boolean };
  owners?: 'warn' | 'update';
  controlNamespace?: string;
  gates?: RawGate[];
  window?: { timezone?: string; allow: string[] };
  metrics?: { pushgateway?: string };
  notify?: RawNotify[];
  clusters?: { name: string; context: string }[];
  clusterOrder?: 'sequential' | 'interleaved';
}

export interface RawPlan {
  apiVersion: 'kwave.dev/v1alpha1';
  kind: 'RolloutPlan';
  metadata: { name: string };
  spec: RawSpec;
}

/** Every field optional, all the way down: what a check may meet in a plan that failed the schema. */
export type DeepPartial<T> = T extends (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;
