// The webhook gate: POSTs `{plan, revision, wave, phase}` as JSON; a 2xx answer passes. Anything
// else (another status, no answer, a timeout) is retried `retries` times with doubling back-off,
// then fails: a change-ticket check that says "not yet" may say yes a few seconds later. With
// `auth`, each attempt sends `Authorization: Bearer` with a token read then from env or a file;
// with `urlEnv` / `urlFile`, the URL is read then too. The URL is shown only through redactUrl.
import { readFile as fsReadFile } from 'node:fs/promises';
import type { WebhookGate } from '../plan/types.js';
import { hideUrlIn } from '../redactUrl.js';
import { readBearerToken, redactToken } from './bearerToken.js';
import { readUrl, urlSourceName } from './urlSource.js';
import { realSleep, type Sleep } from '../sleep.js';
import { deadline, type GateOutcome, type Measurement } from './types.js';

export interface WebhookPayload {
  plan: string;
  revision: string;
  /** The wave just completed (1-based). */
  wave: number;
  /** The rollout phase, e.g. `Progressing`. */
  phase: string;
}

export interface WebhookDeps {
  fetch?: typeof fetch;
  /** Where `auth.bearerTokenEnv` and `urlEnv` are looked up (default process.env). */
  env?: Record<string, string | undefined>;
  readFile?: (path: string) => Promise<string>;
  sleep?: Sleep;
  now?: () => number;
  signal?: AbortSignal;
  /** First back-off in ms (default 1000); doubles per retry up to 30 s. */
  backoffMs?: number;
  onMeasurement?: (m: Measurement, attempt: number, attempts: number) => void;
}

const MAX_BACKOFF_MS = 30_000;

export async function callWebhookGate(
  name: string,
  gate: WebhookGate,
  payload: WebhookPayload,
  deps: WebhookDeps = {},
): Promise<GateOutcome> {
  const doFetch = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? realSleep;
  const now = deps.now ?? Date.now;
  let shown = urlSourceName(gate);
  const attempts = 1 + Math.max(0, gate.retries);
  const measurements: Measurement[] = [];
  const interrupted = (): GateOutcome => ({
    result: 'interrupted',
    message: `${name}: interrupted while calling ${shown}`,
    measurements,
  });
  if (shown === '(invalid URL)')
    return { result: 'failed', message: `${name}: webhook url is not a URL`, measurements };

  const body = JSON.stringify(payload);
  const secretSources = {
    env: deps.env ?? process.env,
    readFile: deps.readFile ?? ((p: string) => fsReadFile(p, 'utf8')),
  };
  let backoff = deps.backoffMs ?? 1_000;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (deps.signal?.aborted) return interrupted();
    // Read per attempt: a mounted token or URL file may rotate between retries.
    const target = await readUrl(gate, secretSources);
    const auth = 'url' in target ? await readBearerToken(gate.auth, secretSources) : { error: target.error };
    const url = 'url' in target ? target.url : undefined;
    if (url !== undefined) shown = urlSourceName({ url });
    if (auth.error || url === undefined) {
      const m: Measurement = {
        at: new Date(now()).toISOString(),
        value: null,
        phase: 'error',
        message: `${shown}: ${auth.error ?? 'no url'}`,
      };
      measurements.push(m);
      deps.onMeasurement?.(m, attempt, attempts);
      // A missing token or URL does not appear by retrying within seconds.
      return { result: 'failed', message: `${name}: webhook ${m.message}`, measurements };
    }
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
    // A server may echo the request (its URL, its headers) in an error body.
    const hide = (text: string) => hideUrlIn(redactToken(text, auth.token), url);
    const timer = deadline(gate.timeoutMs, deps.signal);
    let m: Measurement;
    try {
      const res = await doFetch(url, { method: 'POST', headers, body, signal: timer.signal });
      // Read the body so the connection is freed; its text helps explain a refusal. Redacted
      // before it is cut short: a cut could leave part of an echoed token that no longer matches.
      const text = hide(await res.text())
        .slice(0, 200)
        .replace(/\s+/g, ' ')
        .trim();
      const ok = res.status >= 200 && res.status <= 299;
      const statusText = `${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
      m = {
        at: new Date(now()).toISOString(),
        value: res.status,
        phase: ok ? 'successful' : 'failed',
        message: hide(`${shown} answered ${statusText}${!ok && text ? `: ${text}` : ''}`),
      };
    } catch (err) {
      if (deps.signal?.aborted) return interrupted();
      const cause = (err as { cause?: unknown })?.cause;
      const why = timer.timedOut()
        ? `no answer within ${gate.timeoutMs} ms`
        : cause instanceof Error
          ? cause.message
          : String(err);
      m = { at: new Date(now()).toISOString(), value: null, phase: 'error', message: hide(`${shown}: ${why}`) };
    } finally {
      timer.clear();
    }
    measurements.push(m);
    deps.onMeasurement?.(m, attempt, attempts);
    if (m.phase === 'successful') return { result: 'passed', message: `${name}: ${m.message}`, measurements };
    if (attempt < attempts) {
      if (!(await sleep(backoff, deps.signal))) return interrupted();
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
  const last = measurements[measurements.length - 1]!;
  const tries = measurements.length === 1 ? '' : ` (after ${measurements.length} attempts)`;
  return { result: 'failed', message: `${name}: webhook ${last.message}${tries}`, measurements };
}
