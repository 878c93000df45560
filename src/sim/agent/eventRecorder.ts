// core/v1 Events as a kubelet's recorder POSTs them to the API server: `source.component:
// kubelet`, `source.host` = the node, named `<pod>.<hex nanos>`; a repeat of the same (pod,
// field, type, reason, message) PATCHes count and lastTimestamp instead. Best effort: a lost
// Event is no error. A few are sent at a time, so Events never crowd out status writes.
import pLimit from 'p-limit';
import { eventBody } from '../events.js';
import type { KubeletEventInput } from '../kubelet/port.js';
import { rfc3339 } from '../kubelet/pods.js';
import type { KubeHttp } from './kubeHttp.js';

interface Known {
  namespace: string;
  name: string;
  count: number;
}

export class HttpEventRecorder {
  private readonly known = new Map<string, Known>();
  private readonly limit = pLimit(4);
  private lastNanos = 0n;

  constructor(
    private readonly http: KubeHttp,
    private readonly now: () => Date,
    private readonly onWarning: (message: string) => void = () => {},
    private readonly maxKnown = 20_000,
  ) {}

  record(e: KubeletEventInput): void {
    const meta = e.pod.metadata;
    const namespace = meta.namespace ?? 'default';
    const k = [meta.uid, e.fieldPath ?? '', e.type, e.reason, e.message, e.host].join('\u0000');
    const at = rfc3339(this.now());
    const known = this.known.get(k);
    if (known) {
      known.count++;
      const count = known.count;
      this.known.delete(k);
      this.known.set(k, known);
      this.send(() =>
        this.http.request(
          'PATCH',
          `/api/v1/namespaces/${namespace}/events/${known.name}`,
          { count, lastTimestamp: at },
          'application/strategic-merge-patch+json',
        ),
      );
      return;
    }
    const name = `${meta.name}.${this.nanosHex()}`;
    this.known.set(k, { namespace, name, count: 1 });
    if (this.known.size > this.maxKnown) this.known.delete(this.known.keys().next().value as string);
    const body = eventBody(
      name,
      {
        object: { ...e.pod, apiVersion: 'v1', kind: 'Pod' },
        fieldPath: e.fieldPath,
        type: e.type,
        reason: e.reason,
        message: e.message,
        source: { component: 'kubelet', host: e.host },
      },
      at,
    );
    this.send(() => this.http.request('POST', `/api/v1/namespaces/${namespace}/events`, body));
  }

  /** Resolves once every Event asked for so far has been sent (or given up). */
  async flushed(): Promise<void> {
    while (this.limit.activeCount + this.limit.pendingCount > 0) await new Promise((r) => setTimeout(r, 20));
  }

  private send(fn: () => Promise<unknown>): void {
    void this.limit(fn).catch((err: unknown) => this.onWarning(`event: ${(err as Error).message}`));
  }

  private nanosHex(): string {
    let n = BigInt(this.now().getTime()) * 1_000_000n;
    if (n <= this.lastNanos) n = this.lastNanos + 1n;
    this.lastNanos = n;
    return n.toString(16);
  }
}
