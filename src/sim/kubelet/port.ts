// The kubelet's only door to the cluster: read the pods bound to its nodes (from a local view
// that is kept current), write a pod's status, emit an Event, finish a pod's deletion. One
// kubelet model drives both backends through it: the in-memory store of the embedded simulator
// (synchronous) and a real API server over HTTP (asynchronous: a write returns a promise).
import type { KubeObject } from '../store.js';

/** A write the cluster refused because the kubelet's view was stale (409, 404, uid mismatch): look again. */
export class StaleWrite extends Error {
  override name = 'StaleWrite';
}

/** A synchronous result, or a promise of it for a port that speaks to a remote server. */
export type MaybeAsync<T> = T | Promise<T>;

export interface KubeletEventInput {
  pod: KubeObject;
  /** e.g. `spec.containers{nginx}`. */
  fieldPath?: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** The node whose kubelet reports it (the Event's `source.host`). */
  host: string;
}

export interface KubeletPort {
  /** Every pod the view holds (bound or not). */
  pods(): Iterable<KubeObject>;
  pod(namespace: string, name: string): KubeObject | undefined;
  node(name: string): KubeObject | undefined;
  /** Calls `listener` whenever someone else changes (or deletes) a pod. Returns the unsubscribe. */
  subscribe(listener: (namespace: string, name: string) => void): () => void;
  /**
   * Replaces the pod's status with `status` (the port may send only what the kubelet owns).
   * Returns the resourceVersion written; throws (or rejects with) StaleWrite when the view was stale.
   */
  writeStatus(pod: KubeObject, status: Record<string, unknown>): MaybeAsync<string | undefined>;
  /** The kubelet's final DELETE of a pod whose containers stopped: grace 0, uid precondition. */
  removePod(pod: KubeObject): MaybeAsync<void>;
  /** Best effort, as in Kubernetes: a lost Event is no error. */
  event(e: KubeletEventInput): void;
  /** Writes the node's status.images (its image cache, as nodeImageList builds it). */
  reportNodeImages(node: string, images: readonly { names: string[]; sizeBytes: number }[]): MaybeAsync<void>;
}
