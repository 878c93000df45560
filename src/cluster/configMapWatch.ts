// Follows one ConfigMap (the rollout record) as it changes: GET it, then WATCH from its
// resourceVersion with `fieldSelector=metadata.name=NAME`, and start over whenever the stream
// ends (server timeout, dropped connection, 410 Expired) or falls silent past its liveness deadline
// (a half-open connection, watchLiveness.ts). Each state is handed to `onChange`
// once the server has it; a missing ConfigMap is `undefined`. No polling: between changes the
// only traffic is the open watch (Cluster.watchConfigMaps).
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Cluster } from './cluster.js';
import { KubeError, kubeErrorFromResponse, toKubeError } from './kubeError.js';
import { realSleep, type Sleep } from '../sleep.js';
import { backoffDelay, DEFAULT_RETRY_POLICY } from './retry.js';
import {
  DEFAULT_WATCH_LIVENESS_SECONDS,
  defaultWatchTimeoutSeconds,
  livenessDeadline,
  silenceLimitMs,
} from './watchLiveness.js';

export interface ConfigMapWatchOptions {
  /** Stops the watch; `watchConfigMap`'s promise then resolves. */
  signal: AbortSignal;
  /** Server-side timeout of one watch stream (seconds); the loop reopens it. Default as listWatch.ts's. */
  timeoutSeconds?: number;
  /** Called when a request fails; the loop retries with back-off. */
  onError?: (err: KubeError) => void;
  sleep?: Sleep;
}

type ConfigMapApi = Pick<Cluster, 'getConfigMap' | 'watchConfigMaps'>;

type StreamEnd =
  { kind: 'closed' } | { kind: 'expired' } | { kind: 'error'; error: KubeError } | { kind: 'silent'; error: KubeError };

/**
 * Calls `onChange` with the ConfigMap's current state, then with every later state, until
 * `signal` aborts. The promise resolves after the abort; it never rejects (errors go to
 * `onError` and are retried with back-off). A state (by resourceVersion) is reported once,
 * even when a reconnect reads it again.
 */
export async function watchConfigMap(
  cluster: ConfigMapApi,
  namespace: string,
  name: string,
  onChange: (cm: V1ConfigMap | undefined) => void,
  options: ConfigMapWatchOptions,
): Promise<void> {
  const { signal } = options;
  const sleep = options.sleep ?? realSleep;
  let failures = 0;
  let lastSeen: string | undefined;
  const report = (cm: V1ConfigMap | undefined) => {
    // A reconnect re-reads the state already reported: pass on only what is new.
    const key = cm ? `rv:${cm.metadata?.resourceVersion ?? ''}` : 'absent';
    if (key === lastSeen) return;
    lastSeen = key;
    onChange(cm);
  };

  // After a clean end (the server's timeout) the next stream starts from the last version seen;
  // after an error or 410 the ConfigMap is read again first.
  let from: string | undefined;
  let needRead = true;
  while (!signal.aborted) {
    if (needRead) {
      try {
        const cm = await getOrUndefined(cluster, namespace, name);
        report(cm);
        from = cm?.metadata?.resourceVersion;
        needRead = false;
      } catch (err) {
        if (signal.aborted) break;
        options.onError?.(toKubeError(err));
        await sleep(backoffDelay(++failures, DEFAULT_RETRY_POLICY, Math.random), signal);
        continue;
      }
    }
    const seen = (rv: string) => (from = rv);
    const opened = Date.now();
    const timeoutSeconds =
      options.timeoutSeconds ?? defaultWatchTimeoutSeconds(DEFAULT_WATCH_LIVENESS_SECONDS, Math.random);
    const end = await stream(cluster, namespace, name, from, timeoutSeconds, report, seen, signal);
    if (signal.aborted) break;
    if (end.kind === 'silent') {
      // A half-open connection: watch again from the last version seen, at once.
      options.onError?.(end.error);
      continue;
    }
    if (end.kind === 'closed') {
      // A stream that ends at once, again and again, must not become a busy loop.
      if (Date.now() - opened < 1000) await sleep(backoffDelay(++failures, DEFAULT_RETRY_POLICY, Math.random), signal);
      else failures = 0;
      continue;
    }
    needRead = true;
    if (end.kind === 'error') {
      options.onError?.(end.error);
      await sleep(backoffDelay(++failures, DEFAULT_RETRY_POLICY, Math.random), signal);
    }
  }
}

async function getOrUndefined(
  cluster: ConfigMapApi,
  namespace: string,
  name: string,
): Promise<V1ConfigMap | undefined> {
  try {
    return await cluster.getConfigMap(namespace, name);
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return undefined;
    throw err;
  }
}

/** One watch stream, from `resourceVersion` (or the start, with synthetic ADDED) to its end. */
function stream(
  cluster: ConfigMapApi,
  namespace: string,
  name: string,
  resourceVersion: string | undefined,
  timeoutSeconds: number,
  report: (cm: V1ConfigMap | undefined) => void,
  seen: (resourceVersion: string) => void,
  signal: AbortSignal,
): Promise<StreamEnd> {
  return new Promise<StreamEnd>((resolve) => {
    let settled = false;
    let expired = false;
    let handle: { abort: () => void } | undefined;
    const watchdog = new AbortController();
    const finish = (end: StreamEnd) => {
      if (settled) return;
      settled = true;
      watchdog.abort();
      signal.removeEventListener('abort', onAbort);
      handle?.abort();
      resolve(end);
    };
    const onAbort = () => finish({ kind: 'closed' });
    signal.addEventListener('abort', onAbort, { once: true });
    const limitMs = silenceLimitMs(DEFAULT_WATCH_LIVENESS_SECONDS, timeoutSeconds);
    const alive = livenessDeadline(limitMs, { sleep: realSleep, now: Date.now }, watchdog.signal, (silentMs) =>
      finish({
        kind: 'silent',
        error: new KubeError(
          0,
          'Timeout',
          `watch of ConfigMap ${name} silent for ${Math.round(silentMs / 1000)}s (no event, no bookmark): watched again`,
        ),
      }),
    );

    const query = { fieldSelector: `metadata.name=${name}`, resourceVersion, timeoutSeconds };
    const onEvent = (type: string, object: unknown) => {
      if (settled) return;
      alive.touch();
      const rv = (object as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata?.resourceVersion;
      if (type !== 'ERROR' && typeof rv === 'string') seen(rv);
      // The wire JSON, as getConfigMap returns it: a watched object can be written back as is.
      if (type === 'ADDED' || type === 'MODIFIED') report(object as V1ConfigMap);
      else if (type === 'DELETED') report(undefined);
      else if (type === 'ERROR') {
        const code = (object as { code?: unknown } | undefined)?.code;
        if (code === 410) {
          expired = true;
          finish({ kind: 'expired' });
        } else finish({ kind: 'error', error: kubeErrorFromResponse(typeof code === 'number' ? code : 500, object) });
      }
    };
    const onDone = (err: KubeError | undefined) => {
      if (expired || !err) finish({ kind: 'closed' });
      else finish({ kind: 'error', error: err });
    };
    // A stream that could not open has called onDone already.
    void cluster.watchConfigMaps(namespace, query, onEvent, onDone).then((h) => {
      handle = h;
      if (settled) h.abort();
    });
  });
}
