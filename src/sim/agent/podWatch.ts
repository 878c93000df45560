// The node agent's view of the pods bound to nodes: a list, then a watch from the list's
// resourceVersion with bookmarks; a stream that ends is resumed from the last version seen, an
// expired version (410) or a failed resume relists (and drops what the list no longer has).
// Listeners hear of every pod that changed or went, by namespace and name.
import type { KubeObject } from '../store.js';
import { KubeHttpError, newerVersion, type KubeHttp, type WatchHandle } from './kubeHttp.js';

export interface PodWatchOptions {
  /** Default `spec.nodeName!=`: every pod bound to some node. */
  fieldSelector?: string;
  /** Told of connection problems (they are retried). */
  onWarning?: (message: string) => void;
  /** Wait before a retry, in ms. Default 1000. */
  retryMs?: number;
}

interface PodList {
  metadata: { resourceVersion: string; continue?: string };
  items: KubeObject[];
}

const key = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

export class PodWatch {
  private readonly pods = new Map<string, KubeObject>();
  private readonly listeners = new Set<(namespace: string, name: string) => void>();
  private readonly selector: string;
  private readonly retryMs: number;
  private version: string | undefined;
  private current: WatchHandle | undefined;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Resolves once the first list is in. */
  readonly synced: Promise<void>;

  constructor(
    private readonly http: KubeHttp,
    private readonly options: PodWatchOptions = {},
  ) {
    this.selector = options.fieldSelector ?? 'spec.nodeName!=';
    this.retryMs = options.retryMs ?? 1000;
    this.synced = this.run();
    // The first list's failure is the caller's (through `synced`); later ones are retried.
    this.synced.catch(() => {});
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.pods.get(key(namespace, name));
  }

  values(): IterableIterator<KubeObject> {
    return this.pods.values();
  }

  get size(): number {
    return this.pods.size;
  }

  subscribe(listener: (namespace: string, name: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Takes the pod a write of the agent's returned, unless the view already holds it or a newer
   * one; listeners hear of it as of any change (its watch event will then be no news).
   */
  put(pod: KubeObject): void {
    const k = key(pod.metadata.namespace, pod.metadata.name);
    const old = this.pods.get(k);
    if (!old || old.metadata.uid !== pod.metadata.uid) return; // deleted or replaced meanwhile: the watch knows better
    if (!newerVersion(pod.metadata.resourceVersion, old.metadata.resourceVersion)) return;
    this.pods.set(k, pod);
    this.notify(pod.metadata.namespace, pod.metadata.name);
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.current?.abort();
  }

  private notify(namespace: string | undefined, name: string): void {
    for (const l of this.listeners) l(namespace ?? '', name);
  }

  private async run(): Promise<void> {
    await this.relist();
    void this.follow();
  }

  private async relist(): Promise<void> {
    const seen = new Map<string, KubeObject>();
    let cont: string | undefined;
    let version = '';
    do {
      const q = new URLSearchParams({ fieldSelector: this.selector, limit: '500' });
      if (cont) q.set('continue', cont);
      const page = await this.http.request<PodList>('GET', `/api/v1/pods?${q}`);
      for (const p of page.items)
        seen.set(key(p.metadata.namespace, p.metadata.name), { ...p, apiVersion: 'v1', kind: 'Pod' });
      cont = page.metadata.continue || undefined;
      version = page.metadata.resourceVersion;
    } while (cont);
    const changed: KubeObject[] = [];
    for (const [k, old] of this.pods) {
      if (!seen.has(k)) {
        this.pods.delete(k);
        changed.push(old);
      }
    }
    for (const [k, p] of seen) {
      const old = this.pods.get(k);
      if (old && old.metadata.resourceVersion === p.metadata.resourceVersion) continue;
      this.pods.set(k, p);
      changed.push(p);
    }
    this.version = version;
    for (const p of changed) this.notify(p.metadata.namespace, p.metadata.name);
  }

  private async follow(): Promise<void> {
    while (!this.closed) {
      const q = new URLSearchParams({
        watch: 'true',
        fieldSelector: this.selector,
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(300 + Math.floor(Math.random() * 300)),
      });
      if (this.version) q.set('resourceVersion', this.version);
      let expired = false;
      try {
        this.current = this.http.watch(`/api/v1/pods?${q}`, (type, object) => {
          if (type === 'ERROR') {
            if ((object as { code?: number }).code === 410) expired = true;
            else this.options.onWarning?.(`pod watch error: ${JSON.stringify(object)}`);
            this.current?.abort();
            return;
          }
          const pod = { ...object, apiVersion: 'v1', kind: 'Pod' } as KubeObject;
          const rv = pod.metadata.resourceVersion;
          if (rv) this.version = rv;
          if (type === 'BOOKMARK') return;
          const k = key(pod.metadata.namespace, pod.metadata.name);
          if (type === 'DELETED') {
            const old = this.pods.get(k);
            if (old && old.metadata.uid !== pod.metadata.uid) return;
            this.pods.delete(k);
          } else {
            const old = this.pods.get(k);
            // The agent's own write may already have put this version (or a newer one) in.
            if (old && old.metadata.uid === pod.metadata.uid && !newerVersion(rv, old.metadata.resourceVersion)) return;
            this.pods.set(k, pod);
          }
          this.notify(pod.metadata.namespace, pod.metadata.name);
        });
        await this.current.done;
        if (expired && !this.closed) await this.relist();
      } catch (err) {
        if (this.closed) return;
        this.options.onWarning?.(`pod watch: ${(err as Error).message}; retrying`);
        await this.pause();
        try {
          // Refused (410 Gone, or any other answer): start over from a fresh list.
          if (err instanceof KubeHttpError) await this.relist();
        } catch (relistErr) {
          this.options.onWarning?.(`pod relist: ${(relistErr as Error).message}; retrying`);
        }
      }
    }
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      this.retryTimer = setTimeout(resolve, this.retryMs);
    });
  }
}
