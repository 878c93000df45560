// The chaos harness's own change feed on the real control plane: list, then watch from the list's
// resourceVersion, resumed from the last version seen when a stream ends (an apiserver restart
// ends them all) and listed again when the server answers 410 Gone. Independent of kwave's
// client code on purpose: it observes kwave. Each 410 it meets is counted, as evidence of what
// the apiserver answered resuming watchers at that moment.
import { KubeHttpError, type KubeHttp, type WatchHandle } from '../../src/sim/agent/kubeHttp.js';
import type { KubeObject } from '../../src/sim/store.js';
import type { ClusterChange } from './cluster.js';

export class ApiFeed {
  /** Watches answered 410 Gone (by an ERROR event or an HTTP 410). */
  expired = 0;
  private rv: string | undefined;
  private current: WatchHandle | undefined;
  private closed = false;
  private readonly known = new Map<string, KubeObject>();

  constructor(
    private readonly http: KubeHttp,
    private readonly resource: ClusterChange['resource'],
    /** The collection's path, e.g. `/api/v1/namespaces/default/pods`. */
    private readonly path: string,
    private readonly onChange: (change: ClusterChange) => void,
  ) {}

  /** Resolves after the first list; the loop then runs until close(). */
  async start(): Promise<void> {
    await this.list();
    void this.loop();
  }

  private async list(): Promise<void> {
    const list = await this.http.request<{ items: KubeObject[]; metadata: { resourceVersion: string } }>(
      'GET',
      this.path,
    );
    const seen = new Set<string>();
    for (const item of list.items) {
      const name = item.metadata.name;
      seen.add(name);
      if (this.known.get(name)?.metadata.resourceVersion !== item.metadata.resourceVersion)
        this.emit(this.known.has(name) ? 'MODIFIED' : 'ADDED', item);
    }
    for (const [name, object] of this.known) if (!seen.has(name)) this.emit('DELETED', object);
    this.rv = list.metadata.resourceVersion;
  }

  private emit(type: ClusterChange['type'], object: KubeObject): void {
    if (type === 'DELETED') this.known.delete(object.metadata.name);
    else this.known.set(object.metadata.name, object);
    this.onChange({ resource: this.resource, type, object });
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      try {
        if (this.rv === undefined) await this.list();
        let gone = false;
        const q = new URLSearchParams({
          watch: 'true',
          resourceVersion: this.rv!,
          allowWatchBookmarks: 'true',
          timeoutSeconds: '600',
        });
        this.current = this.http.watch(`${this.path}?${q}`, (type, object) => {
          if (type === 'ERROR') {
            if ((object as { code?: number }).code === 410) gone = true;
            return;
          }
          const rv = (object as KubeObject).metadata?.resourceVersion;
          if (type !== 'BOOKMARK') this.emit(type, object as unknown as KubeObject);
          if (rv) this.rv = rv;
        });
        await this.current.done;
        if (gone) this.expire();
        else await new Promise((r) => setTimeout(r, 100)); // ended (timeout, restart): resume shortly
      } catch (err) {
        if (this.closed) return;
        if (err instanceof KubeHttpError && err.code === 410) this.expire();
        // Refused connections while the apiserver restarts, a frozen etcd's timeouts: try again soon.
        await new Promise((r) => setTimeout(r, 300));
      }
    }
  }

  private expire(): void {
    this.expired++;
    this.rv = undefined;
  }

  close(): void {
    this.closed = true;
    this.current?.abort();
  }
}
