// The kubelet's port onto the embedded simulator's in-memory store: reads and writes are
// synchronous, Events go through the store's event recorder, and the kubelet's own writes are not
// reported back to it (it knows what it wrote).
import { EventRecorder } from '../events.js';
import { StoreError, type KubeObject, type Store } from '../store.js';
import { StaleWrite, type KubeletEventInput, type KubeletPort } from './port.js';

export class StorePort implements KubeletPort {
  private readonly events: EventRecorder;
  /** > 0 while the kubelet itself writes: its own changes need no reaction. */
  private writing = 0;

  constructor(
    readonly store: Store,
    now: () => Date,
    maxEvents?: number,
  ) {
    this.events = new EventRecorder(store, now, maxEvents);
  }

  pods(): Iterable<KubeObject> {
    return this.store.list('pods');
  }

  pod(namespace: string, name: string): KubeObject | undefined {
    return this.store.get('pods', namespace || undefined, name);
  }

  node(name: string): KubeObject | undefined {
    return this.store.get('nodes', undefined, name);
  }

  subscribe(listener: (namespace: string, name: string) => void): () => void {
    return this.store.subscribe((change) => {
      if (this.writing > 0 || change.resource !== 'pods') return;
      listener(change.object.metadata.namespace ?? '', change.object.metadata.name);
    });
  }

  writeStatus(pod: KubeObject, status: Record<string, unknown>): string | undefined {
    return this.write(() => this.store.update('pods', { ...pod, status }, pod.metadata.resourceVersion)).metadata
      .resourceVersion;
  }

  removePod(pod: KubeObject): void {
    this.write(() => this.store.remove('pods', pod.metadata.namespace, pod.metadata.name, pod.metadata.uid));
  }

  event(e: KubeletEventInput): void {
    this.write(() =>
      this.events.record({
        object: e.pod,
        fieldPath: e.fieldPath,
        type: e.type,
        reason: e.reason,
        message: e.message,
        source: { component: 'kubelet', host: e.host },
      }),
    );
  }

  reportNodeImages(node: string, images: readonly { names: string[]; sizeBytes: number }[]): void {
    const current = this.store.get('nodes', undefined, node);
    if (!current) return;
    this.write(() =>
      this.store.update('nodes', {
        ...current,
        status: { ...(current.status as Record<string, unknown>), images: structuredClone(images) },
      }),
    );
  }

  /** Creates a pod as the kubelet that runs it (the world's seeding). */
  createPod(manifest: KubeObject): KubeObject {
    this.writing++;
    try {
      return this.store.create('pods', manifest);
    } finally {
      this.writing--;
    }
  }

  /** Runs a store write of the kubelet's; a refusal (stale version, gone) becomes StaleWrite. */
  write<T>(fn: () => T): T {
    this.writing++;
    try {
      return fn();
    } catch (err) {
      if (err instanceof StoreError) throw new StaleWrite(err.message);
      throw err;
    } finally {
      this.writing--;
    }
  }
}
