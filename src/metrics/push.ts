// Pushgateway support for batch runs: the whole kwave registry is pushed under job `kwave`,
// grouped by `plan`, at each wave end and at exit. A failed push is a value to report, never a
// reason to stop a rollout.
import { Pushgateway, type RegistryContentType } from 'prom-client';
import type { KwaveMetrics } from './registry.js';

const PUSH_JOB = 'kwave';

export type PushResult = { ok: true; url: string } | { ok: false; url: string; error: string };

export interface PushOptions {
  /** Per-request timeout in ms (default 5000). */
  timeoutMs?: number;
}

/** Where the group lives on the gateway, e.g. `http://pg:9091/metrics/job/kwave/plan/web`. */
export function pushGroupUrl(gatewayUrl: string, plan: string): string {
  return `${gatewayUrl.replace(/\/+$/, '')}/metrics/job/${encodeURIComponent(PUSH_JOB)}/plan/${encodeURIComponent(plan)}`;
}

export class MetricsPusher {
  private readonly gateway: Pushgateway<RegistryContentType>;
  /** The last push asked for; the next one starts when it has settled. */
  private queue: Promise<unknown> = Promise.resolve();
  readonly url: string;

  constructor(
    private readonly metrics: KwaveMetrics,
    gatewayUrl: string,
    options: PushOptions = {},
  ) {
    this.url = pushGroupUrl(gatewayUrl, metrics.plan);
    this.gateway = new Pushgateway(gatewayUrl, { timeout: options.timeoutMs ?? 5_000 }, metrics.registry);
  }

  /**
   * POSTs the current values (pushAdd: replaces same-named metrics in the group, keeps others).
   * Resolves with the outcome; never rejects. Pushes go one after another, each taking the values
   * of its turn: a wave-end push still in flight must not land after (and undo) the final one.
   */
  push(): Promise<PushResult> {
    const turn = this.queue.then(() => this.send());
    this.queue = turn;
    return turn;
  }

  private async send(): Promise<PushResult> {
    try {
      await this.gateway.pushAdd({ jobName: PUSH_JOB, groupings: { plan: this.metrics.plan } });
      return { ok: true, url: this.url };
    } catch (err) {
      return { ok: false, url: this.url, error: err instanceof Error ? err.message : String(err) };
    }
  }
}
