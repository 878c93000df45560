// Runs one gate of a plan after a wave: pause → approval → prometheus → webhook, in that order,
// stopping at the first step that does not pass. Counts the outcome into kwave_gate_checks_total.
import type { Gate } from '../plan/types.js';
import type { CheckGate } from '../rollout/gateCheck.js';
import { evaluatePrometheusGate } from './prometheus.js';
import { formatDuration } from '../durationText.js';
import { realSleep, type Sleep } from '../sleep.js';
import type { GateCheckResult, GateOutcome, GateResult, Measurement } from './types.js';
import { callWebhookGate } from './webhook.js';

export type {
  GateCheckResult,
  GateOutcome,
  GateResult,
  Measurement,
  MeasurementPhase,
  MeasuredValue,
  WouldHave,
} from './types.js';
export { realSleep, type Sleep } from '../sleep.js';
export { evaluatePrometheusGate, compileGateConditions, queryEndpoint, type PrometheusGateDeps } from './prometheus.js';
export { callWebhookGate, type WebhookDeps, type WebhookPayload } from './webhook.js';
export { redactUrl } from '../redactUrl.js';

export type GateStepKind = 'pause' | 'approval' | 'prometheus' | 'webhook';

export interface GateStep extends GateOutcome {
  kind: GateStepKind;
}

/** The outcome of a whole gate, with each step that ran. `measurements` joins the steps' measurements. */
export interface GateRun extends GateOutcome {
  gate: string;
  steps: GateStep[];
}

export interface GateContext {
  plan: string;
  revision: string;
  /** The wave just completed (1-based). */
  wave: number;
  /** The rollout phase, sent to webhooks. */
  phase: string;
  /** Where the check is counted; a KwaveMetrics fits. */
  metrics?: { gateChecked(gate: string, result: GateCheckResult): void };
  /** SIGINT/SIGTERM: every step stops and the gate reports `interrupted`. */
  signal?: AbortSignal;
  sleep?: Sleep;
  now?: () => number;
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  readFile?: (path: string) => Promise<string>;
  /** Pause steps report the time left (ms) at the start and about every `pauseTickMs` (default 1000). */
  onPause?: (msLeft: number) => void;
  pauseTickMs?: number;
  /** Approval steps: is this wave's gate approved already? (the rollout record holds approvals) */
  isApproved?: () => Promise<boolean>;
  /** Resolves when an approval arrives; should reject or return when the signal fires. */
  waitForApproval?: (signal?: AbortSignal) => Promise<void>;
  /** Called once when an approval step starts waiting, so the output can say so. */
  onAwaitingApproval?: () => void;
  onMeasurement?: (step: 'prometheus' | 'webhook', m: Measurement, index: number, count: number) => void;
  /** First webhook back-off in ms (default 1000). */
  webhookBackoffMs?: number;
}

async function runPause(name: string, pauseMs: number, ctx: GateContext): Promise<GateOutcome> {
  const sleep = ctx.sleep ?? realSleep;
  const now = ctx.now ?? Date.now;
  const tick = Math.max(1, ctx.pauseTickMs ?? 1000);
  const end = now() + pauseMs;
  for (let left = pauseMs; left > 0; left = end - now()) {
    ctx.onPause?.(left);
    if (!(await sleep(Math.min(tick, left), ctx.signal))) {
      return {
        result: 'interrupted',
        message: `${name}: interrupted with ${formatDuration(Math.max(0, end - now()))} of the pause left`,
        measurements: [],
      };
    }
  }
  ctx.onPause?.(0);
  return { result: 'passed', message: `${name}: paused ${formatDuration(pauseMs)}`, measurements: [] };
}

async function runApproval(name: string, ctx: GateContext): Promise<GateOutcome> {
  if (!ctx.isApproved || !ctx.waitForApproval) {
    return {
      result: 'failed',
      message: `${name}: approval required, but this run has no way to receive approvals`,
      measurements: [],
    };
  }
  if (await ctx.isApproved()) return { result: 'passed', message: `${name}: approved`, measurements: [] };
  ctx.onAwaitingApproval?.();
  try {
    await ctx.waitForApproval(ctx.signal);
  } catch (err) {
    if (ctx.signal?.aborted)
      return { result: 'interrupted', message: `${name}: interrupted while waiting for approval`, measurements: [] };
    throw err;
  }
  if (ctx.signal?.aborted)
    return { result: 'interrupted', message: `${name}: interrupted while waiting for approval`, measurements: [] };
  return { result: 'passed', message: `${name}: approved`, measurements: [] };
}

/**
 * Runs the steps the gate declares. Resolves with the gate's outcome; rejects only on a bug
 * (or when `waitForApproval` rejects without the signal having fired).
 */
export async function runGate(gate: Gate, ctx: GateContext): Promise<GateRun> {
  const name = gate.name;
  const steps: GateStep[] = [];
  const plan: { kind: GateStepKind; run: () => Promise<GateOutcome> }[] = [];
  if (gate.pauseMs > 0) plan.push({ kind: 'pause', run: () => runPause(name, gate.pauseMs, ctx) });
  if (gate.approval) plan.push({ kind: 'approval', run: () => runApproval(name, ctx) });
  const prometheus = gate.prometheus;
  if (prometheus) {
    plan.push({
      kind: 'prometheus',
      run: () =>
        evaluatePrometheusGate(name, prometheus, {
          fetch: ctx.fetch,
          sleep: ctx.sleep,
          now: ctx.now,
          signal: ctx.signal,
          env: ctx.env,
          readFile: ctx.readFile,
          onMeasurement: (m, i, n) => ctx.onMeasurement?.('prometheus', m, i, n),
        }),
    });
  }
  const webhook = gate.webhook;
  if (webhook) {
    const payload = { plan: ctx.plan, revision: ctx.revision, wave: ctx.wave, phase: ctx.phase };
    plan.push({
      kind: 'webhook',
      run: () =>
        callWebhookGate(name, webhook, payload, {
          fetch: ctx.fetch,
          sleep: ctx.sleep,
          now: ctx.now,
          signal: ctx.signal,
          backoffMs: ctx.webhookBackoffMs,
          onMeasurement: (m, i, n) => ctx.onMeasurement?.('webhook', m, i, n),
        }),
    });
  }

  let result: GateResult = 'passed';
  let message = '';
  for (const step of plan) {
    const outcome = await step.run();
    steps.push({ kind: step.kind, ...outcome });
    if (outcome.result !== 'passed') {
      result = outcome.result;
      message = outcome.message;
      break;
    }
  }
  if (result === 'passed') {
    const prefix = `${name}: `;
    const parts = steps.map((s) => (s.message.startsWith(prefix) ? s.message.slice(prefix.length) : s.message));
    message = parts.length ? `${prefix}passed (${parts.join('; ')})` : `${prefix}passed (nothing to check)`;
  }
  if (result !== 'interrupted') ctx.metrics?.gateChecked(name, result);
  const wouldHave = result === 'passed' ? steps.find((s) => s.wouldHave)?.wouldHave : undefined;
  return {
    gate: name,
    result,
    message,
    measurements: steps.flatMap((s) => s.measurements),
    steps,
    ...(wouldHave ? { wouldHave } : {}),
  };
}

/** What a run fixes for all its gate checks; the runner adds the wave and its callbacks. */
export type GateCheckerOptions = Pick<
  GateContext,
  'plan' | 'revision' | 'metrics' | 'sleep' | 'now' | 'fetch' | 'env' | 'readFile' | 'pauseTickMs' | 'webhookBackoffMs'
>;

/** `runGate` as the runner's `CheckGate`: what `kwave run` (and a library user) plugs into `runRollout`. */
export function gateChecker(options: GateCheckerOptions): CheckGate {
  return (gate, hooks) =>
    runGate(gate, {
      ...options,
      phase: 'Progressing',
      wave: hooks.wave,
      signal: hooks.signal,
      onPause: hooks.onPause,
      onAwaitingApproval: hooks.onAwaitingApproval,
      onMeasurement: (_step, m, index, count) => hooks.onMeasurement(m, index, count),
      ...(hooks.isApproved && hooks.waitForApproval
        ? { isApproved: hooks.isApproved, waitForApproval: hooks.waitForApproval }
        : {}),
    });
}
