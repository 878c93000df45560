// The simulated app's own traffic, for a real Prometheus to scrape and a rollout to gate on:
// `sim_http_requests_total{namespace,pod,app,code}`. Only Ready pods receive traffic (as behind a
// Service), at a fixed rate per pod; the running image's errorRate is the share answered 500.
//
// Counters are computed lazily at scrape time from how long each pod has been Ready: nothing
// ticks per pod, so 50,000 pods cost nothing between scrapes. The exposition text is written by
// hand because a prom-client Registry with 100,000 labelled series is slower to render.
import type { ImageTable } from './images.js';
import type { ContainerStatus } from './podStatus.js';
import type { KubeObject } from './store.js';

export interface AppTrafficOptions {
  images: ImageTable;
  /** Requests per second each Ready pod serves. Default 10. */
  requestsPerSecond?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

interface PodTraffic {
  namespace: string;
  pod: string;
  app: string;
  /** Requests answered 200 and 500 up to `since` (or up to now if not Ready). */
  ok: number;
  failed: number;
  /** When the current Ready period began, or undefined when not Ready. */
  readySince?: number;
  /** Share of 5xx of the image running during the current Ready period. */
  errorRate: number;
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class AppTraffic {
  private readonly pods = new Map<string, PodTraffic>();
  private readonly images: ImageTable;
  private readonly rate: number;
  private readonly now: () => number;

  constructor(options: AppTrafficOptions) {
    this.images = options.images;
    this.rate = options.requestsPerSecond ?? 10;
    this.now = options.now ?? Date.now;
  }

  /** Records a pod's readiness change (`ready` undefined: the pod is gone, its series go too). */
  onReadiness(pod: KubeObject, ready: boolean | undefined): void {
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
    if (ready === undefined) {
      this.pods.delete(key);
      return;
    }
    let t = this.pods.get(key);
    if (!t) {
      const labels = pod.metadata.labels ?? {};
      t = {
        namespace: pod.metadata.namespace ?? '',
        pod: pod.metadata.name,
        app: labels.app ?? labels['app.kubernetes.io/name'] ?? '',
        ok: 0,
        failed: 0,
        errorRate: 0,
      };
      this.pods.set(key, t);
    }
    const now = this.now();
    this.fold(t, now);
    t.readySince = ready ? now : undefined;
    t.errorRate = ready ? this.errorRateOf(pod) : 0;
  }

  /** Prometheus text exposition (format 0.0.4) of every pod's counters. */
  exposition(): string {
    const now = this.now();
    const lines = [
      '# HELP sim_http_requests_total HTTP requests served by the simulated app, by pod and status code.',
      '# TYPE sim_http_requests_total counter',
    ];
    for (const t of this.pods.values()) {
      const { ok, failed } = this.totals(t, now);
      const labels = `namespace="${escapeLabel(t.namespace)}",pod="${escapeLabel(t.pod)}",app="${escapeLabel(t.app)}"`;
      lines.push(`sim_http_requests_total{${labels},code="200"} ${Math.floor(ok)}`);
      lines.push(`sim_http_requests_total{${labels},code="500"} ${Math.floor(failed)}`);
    }
    return lines.join('\n') + '\n';
  }

  /** Totals so far for one pod, e.g. for tests. */
  requests(namespace: string, pod: string): { ok: number; failed: number } | undefined {
    const t = this.pods.get(`${namespace}/${pod}`);
    if (!t) return undefined;
    const { ok, failed } = this.totals(t, this.now());
    return { ok: Math.floor(ok), failed: Math.floor(failed) };
  }

  private totals(t: PodTraffic, now: number): { ok: number; failed: number } {
    if (t.readySince === undefined) return { ok: t.ok, failed: t.failed };
    const served = ((now - t.readySince) / 1000) * this.rate;
    return { ok: t.ok + served * (1 - t.errorRate), failed: t.failed + served * t.errorRate };
  }

  /** Adds the requests of the Ready period so far to the totals, and restarts the period at `now`. */
  private fold(t: PodTraffic, now: number): void {
    const { ok, failed } = this.totals(t, now);
    t.ok = ok;
    t.failed = failed;
    if (t.readySince !== undefined) t.readySince = now;
  }

  /** The worst errorRate among the images the pod's containers run. */
  private errorRateOf(pod: KubeObject): number {
    const statuses = (pod.status as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses ?? [];
    let rate = 0;
    for (const s of statuses) rate = Math.max(rate, this.images.lookup(s.image)?.errorRate ?? 0);
    return rate;
  }
}
