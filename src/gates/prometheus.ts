// The Prometheus gate's shell: waits initialDelay, then queries up to `count` times, `interval`
// apart, and lets prometheusDecision.ts judge (and turn a dry run's failure into `wouldHave`). Clock, sleep, fetch and environment are injectable;
// the AbortSignal ends a gate early with result `interrupted`.
import { readFile as fsReadFile } from 'node:fs/promises';
import type { PrometheusGate } from '../plan/types.js';
import { readBearerToken, redactToken } from './bearerToken.js';
import { compileCondition } from './conditions.js';
import { classify, decide, verdictOf, type Classified, type Conditions } from './prometheusDecision.js';
import { readQueryResponse, type QueryValue } from './prometheusResponse.js';
import { realSleep, type Sleep } from '../sleep.js';
import { deadline, type GateOutcome, type Measurement } from './types.js';

export interface PrometheusGateDeps {
  fetch?: typeof fetch;
  sleep?: Sleep;
  now?: () => number;
  /** Fires on SIGINT/SIGTERM: the gate stops and reports `interrupted`. */
  signal?: AbortSignal;
  /** Where `auth.bearerTokenEnv` is looked up (default process.env). */
  env?: Record<string, string | undefined>;
  readFile?: (path: string) => Promise<string>;
  /** Called after each measurement, e.g. to update the record and the output live. */
  onMeasurement?: (m: Measurement, index: number, count: number) => void;
}

/** Both conditions compiled, or the first problem. Exported so the plan loader can check early. */
export function compileGateConditions(
  gate: Pick<PrometheusGate, 'successCondition' | 'failureCondition'>,
): { ok: true; conditions: Conditions } | { ok: false; error: string } {
  const conditions: Conditions = {};
  if (gate.successCondition !== undefined) {
    const c = compileCondition('successCondition', gate.successCondition);
    if (!c.ok) return c;
    conditions.success = c.condition;
  }
  if (gate.failureCondition !== undefined) {
    const c = compileCondition('failureCondition', gate.failureCondition);
    if (!c.ok) return c;
    conditions.failure = c.condition;
  }
  if (!conditions.success && !conditions.failure)
    return { ok: false, error: 'needs a successCondition, a failureCondition or both' };
  return { ok: true, conditions };
}

/** `http://prom:9090` or `http://host/prometheus/` → the instant-query endpoint under it. */
export function queryEndpoint(address: string): URL {
  const base = new URL(address);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL('api/v1/query', base);
}

type Fetched = { ok: true; value: QueryValue } | { ok: false; error: string } | { interrupted: true };

function networkError(err: unknown): string {
  // fetch wraps the socket error: the useful part (ECONNREFUSED 127.0.0.1:1) is in `cause`.
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof Error) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

async function queryOnce(
  gate: PrometheusGate,
  endpoint: URL,
  deps: Required<Omit<PrometheusGateDeps, 'signal' | 'onMeasurement'>> & { signal?: AbortSignal },
): Promise<Fetched> {
  const where = `GET ${endpoint.origin}${endpoint.pathname}`;
  const auth = await readBearerToken(gate.auth, deps);
  if (auth.error) return { ok: false, error: auth.error };
  const hide = (text: string) => redactToken(text, auth.token);
  const url = new URL(endpoint);
  url.searchParams.set('query', gate.query);
  const timer = deadline(gate.timeoutMs, deps.signal);
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
  try {
    const res = await deps.fetch(url, { headers, signal: timer.signal });
    const body = await res.text();
    const read = readQueryResponse(res.status, body);
    return read.ok ? read : { ok: false, error: hide(`${where}: ${read.error}`) };
  } catch (err) {
    if (deps.signal?.aborted) return { interrupted: true };
    if (timer.timedOut()) return { ok: false, error: `${where}: no answer within ${gate.timeoutMs} ms` };
    return { ok: false, error: hide(`${where}: ${networkError(err)}`) };
  } finally {
    timer.clear();
  }
}

/** Runs one Prometheus gate to its outcome. Never rejects for Prometheus' sake: problems are measurements. */
export async function evaluatePrometheusGate(
  name: string,
  gate: PrometheusGate,
  deps: PrometheusGateDeps = {},
): Promise<GateOutcome> {
  const d = {
    fetch: deps.fetch ?? fetch,
    sleep: deps.sleep ?? realSleep,
    now: deps.now ?? Date.now,
    env: deps.env ?? process.env,
    readFile: deps.readFile ?? ((p: string) => fsReadFile(p, 'utf8')),
    signal: deps.signal,
  };
  const measurements: Measurement[] = [];
  const interrupted = (): GateOutcome => ({
    result: 'interrupted',
    message: `${name}: interrupted after ${measurements.length} of ${gate.count} measurements`,
    measurements,
  });

  const compiled = compileGateConditions(gate);
  if (!compiled.ok) return { result: 'failed', message: `${name}: ${compiled.error}`, measurements };
  let endpoint: URL;
  try {
    endpoint = queryEndpoint(gate.address);
  } catch {
    return { result: 'failed', message: `${name}: address "${gate.address}" is not a URL`, measurements };
  }

  const limits = {
    count: Math.max(1, gate.count),
    failureLimit: gate.failureLimit,
    inconclusiveLimit: gate.inconclusiveLimit,
    consecutiveErrorLimit: gate.consecutiveErrorLimit,
    consecutiveSuccessLimit: gate.consecutiveSuccessLimit,
  };
  const classified: Classified[] = [];
  const start = d.now();
  for (let i = 0; i < limits.count; i++) {
    // A fixed schedule: slow answers do not stretch the gate.
    const due = start + gate.initialDelayMs + i * gate.intervalMs;
    const wait = due - d.now();
    if (wait > 0 && !(await d.sleep(wait, d.signal))) return interrupted();
    if (d.signal?.aborted) return interrupted();

    const fetched = await queryOnce(gate, endpoint, d);
    if ('interrupted' in fetched) return interrupted();
    const c: Classified = fetched.ok
      ? classify(fetched.value, compiled.conditions, gate.noData)
      : { phase: 'error', message: fetched.error };
    const value = fetched.ok && fetched.value.kind === 'value' ? fetched.value.result : null;
    const m: Measurement = { at: new Date(d.now()).toISOString(), value, phase: c.phase, message: c.message };
    classified.push(c);
    measurements.push(m);
    deps.onMeasurement?.(m, i + 1, limits.count);

    const decision = decide(name, classified, limits);
    if (decision.kind !== 'continue') return { ...verdictOf(name, decision, gate.dryRun), measurements };
  }
  // decide() always ends the loop at `count`; this is only for the type checker.
  return { result: 'inconclusive', message: `${name}: no decision after ${limits.count} measurements`, measurements };
}
