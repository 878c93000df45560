// What Cluster's calls take and give back: list and watch queries, lists with their
// resourceVersion, watch events, the ConfigMap merge patch, and access review questions. Types only.
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { KubeError } from './kubeError.js';
import type { KubeVerb } from './requestCounter.js';

export interface ListPodsOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; default 500. */
  limit?: number;
}

export interface PodList {
  items: V1Pod[];
  /** The list's resourceVersion: a watch started from it sees every later change. */
  resourceVersion: string;
}

export interface WatchPodsQuery {
  labelSelector?: string;
  fieldSelector?: string;
  /** Start after this version; without it the server first sends every object as ADDED. */
  resourceVersion?: string;
  /** The server ends the stream after this long. */
  timeoutSeconds?: number;
  /** Default true. */
  allowWatchBookmarks?: boolean;
  /**
   * True for a version whose object the caller already holds (the answer to its own write): that
   * event reaches it as a BOOKMARK of the version, without being parsed (wire.ts, `known`).
   */
  known?: (resourceVersion: string) => boolean;
}

export type PodWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; pod: V1Pod }
  | { type: 'BOOKMARK'; resourceVersion: string }
  /** The server ended the watch with a Status, e.g. code 410 when `resourceVersion` is too old. */
  | { type: 'ERROR'; error: KubeError };

export interface NodeList {
  items: V1Node[];
  /** The list's resourceVersion: a watch started from it sees every later change. */
  resourceVersion: string;
}

export type NodeWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; node: V1Node }
  | { type: 'BOOKMARK'; resourceVersion: string }
  | { type: 'ERROR'; error: KubeError };

export interface PdbList {
  items: V1PodDisruptionBudget[];
  resourceVersion: string;
}

export type PdbWatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; pdb: V1PodDisruptionBudget }
  | { type: 'BOOKMARK'; resourceVersion: string }
  | { type: 'ERROR'; error: KubeError };

/** A node watch's query: as for pods, without selectors (kwave follows every node). */
export type WatchNodesQuery = Omit<WatchPodsQuery, 'labelSelector' | 'fieldSelector'>;

export interface WatchHandle {
  /** Ends the stream; `onDone` is then called once (with an abort error, which callers that asked for it ignore). */
  abort(): void;
}

export interface ConfigMapMergePatch {
  metadata?: {
    labels?: Record<string, string | null>;
    annotations?: Record<string, string | null>;
    resourceVersion?: string;
  };
  data?: Record<string, string | null>;
}

/** A permission to ask about: `patch` of `pods/status` (group "") in namespace `web`. */
export interface AccessQuestion {
  verb: KubeVerb;
  /** API group; "" for core. */
  group: string;
  /** With its subresource, as `pods/status`. */
  resource: string;
  namespace?: string;
  name?: string;
}

export interface AccessAnswer {
  allowed: boolean;
  /** The authorizer's reason, often empty. */
  reason: string;
}

/** A rule of a SelfSubjectRulesReview (RBAC's shape; `*` matches any). */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface RulesAnswer {
  resourceRules: ResourceRule[];
  /** True when an authorizer could not list its rules: what is not shown may still be allowed. */
  incomplete: boolean;
}
