// One error value for everything that can go wrong talking to the API server, so callers branch
// on numbers (409: re-read and re-decide; 404: gone; 422: refused; 410: relist) instead of
// digging through client-node's ApiException, node-fetch's FetchError and friends.
import { ExitCode, KwaveError } from '../errors.js';

/** Connection-level failures: the request may or may not have reached the server. */
export const CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
]);

/**
 * A failed API request. `code` is the HTTP status, or 0 when no response arrived (connection
 * refused or dropped, timeout); then `reason` names what happened (`ECONNRESET`, `Timeout`…).
 * For HTTP errors `reason` is the `Status.reason` the server sent (`Conflict`, `NotFound`,
 * `Invalid`, `Expired`, `TooManyRequests`…).
 */
export class KubeError extends Error {
  override name = 'KubeError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    /** Seconds the server asked us to wait (`Retry-After`, or `details.retryAfterSeconds`). */
    readonly retryAfterSeconds?: number,
    /** The request that was refused, on a 403 (so the message can name the missing permission). */
    readonly target?: RequestTarget,
    /**
     * The `reason` of each of the Status's `details.causes` that has one: what admission or
     * validation named as the cause (`FieldValueInvalid`, a plugin's own type such as `NodeCapacity`).
     */
    readonly causes: readonly string[] = [],
  ) {
    super(message);
  }

  /** True when no HTTP response arrived. */
  get isConnectionError(): boolean {
    return this.code === 0;
  }
}

/** What a request asked to do, in RBAC's terms: `patch pods/status in namespace default`. */
export interface RequestTarget {
  verb: string;
  /** With its subresource, as `pods/status`. */
  resource: string;
  /** Undefined for cluster-scoped resources (nodes). */
  namespace?: string;
}

/** The error with the request it answered attached, when it is a 403 (other errors unchanged). */
export function withTarget(err: KubeError, target: RequestTarget): KubeError {
  if (err.code !== 403 || err.target) return err;
  return new KubeError(err.code, err.reason, err.message, err.retryAfterSeconds, target, err.causes);
}

/** `patch pods/status in namespace default`, `list nodes (cluster-wide)`. */
export function describeTarget(target: RequestTarget): string {
  return `${target.verb} ${target.resource} ${target.namespace ? `in namespace ${target.namespace}` : '(cluster-wide)'}`;
}

/** Where the permission comes from, for the refusal message. */
/** Where kwave's install grants what a run needs by default. */
const RBAC_SOURCE = 'deploy/rbac.yaml';

/**
 * `forbidden: cannot patch pods/status in namespace default — deploy/rbac.yaml grants it`;
 * `source` names another file for what only an optional feature needs.
 */
export function forbiddenMessage(target: RequestTarget, source: string = RBAC_SOURCE): string {
  return `forbidden: cannot ${describeTarget(target)} — ${source} grants it`;
}

interface StatusLike {
  kind?: unknown;
  code?: unknown;
  reason?: unknown;
  message?: unknown;
  details?: { retryAfterSeconds?: unknown; causes?: unknown };
}

/** Parses a response body that should be a `Status` (client-node hands it over as a string). */
function parseStatus(body: unknown): StatusLike | undefined {
  let value = body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return value && typeof value === 'object' ? (value as StatusLike) : undefined;
}

/** Reason names the API server uses for codes it sends without a Status body. */
const REASON_BY_CODE: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function retryAfterFrom(
  headers: Record<string, string> | undefined,
  status: StatusLike | undefined,
): number | undefined {
  const header = headers ? Object.entries(headers).find(([k]) => k.toLowerCase() === 'retry-after')?.[1] : undefined;
  const fromHeader = header !== undefined && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
  if (fromHeader !== undefined) return fromHeader;
  const fromBody = status?.details?.retryAfterSeconds;
  return typeof fromBody === 'number' && fromBody >= 0 ? fromBody : undefined;
}

/** The reasons of a Status's `details.causes` (metav1.StatusCause's `reason` on the wire). */
function causesFrom(status: StatusLike | undefined): string[] {
  const causes = status?.details?.causes;
  if (!Array.isArray(causes)) return [];
  return causes.flatMap((c: unknown) => {
    const reason = c && typeof c === 'object' ? (c as { reason?: unknown }).reason : undefined;
    return typeof reason === 'string' && reason ? [reason] : [];
  });
}

/** Builds a KubeError from an HTTP status, its body (a Status, as object or JSON text) and headers. */
export function kubeErrorFromResponse(code: number, body: unknown, headers?: Record<string, string>): KubeError {
  const status = parseStatus(body);
  const reason =
    typeof status?.reason === 'string' && status.reason ? status.reason : (REASON_BY_CODE[code] ?? `HTTP${code}`);
  const message = typeof status?.message === 'string' && status.message ? status.message : `${reason} (HTTP ${code})`;
  return new KubeError(code, reason, message, retryAfterFrom(headers, status), undefined, causesFrom(status));
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  errno?: unknown;
  type?: unknown;
  statusCode?: unknown;
  body?: unknown;
  headers?: unknown;
  message?: unknown;
  cause?: unknown;
}

function connectionCode(err: ErrorLike, depth = 0): string | undefined {
  for (const candidate of [err.code, err.errno]) {
    if (typeof candidate === 'string' && CONNECTION_CODES.has(candidate)) return candidate;
  }
  if (typeof err.message === 'string' && /socket hang up/i.test(err.message)) return 'ECONNRESET';
  if (err.cause && typeof err.cause === 'object' && depth < 3) return connectionCode(err.cause as ErrorLike, depth + 1);
  return undefined;
}

/**
 * Maps whatever a client-node call (or its Watch) threw to a KubeError:
 * - `ApiException` (has a numeric `code`, `body` often a JSON string of a Status, `headers`);
 * - the Watch's non-200 error (`statusCode`);
 * - node-fetch `FetchError` (`code`/`errno` such as ECONNRESET) and `AbortError` (our timeouts).
 * Anything else becomes code 0, reason `Unknown`: it is treated as a connection problem only if
 * it looks like one, so programming errors are not retried (see retry.ts).
 */
export function toKubeError(err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  const e: ErrorLike = err && typeof err === 'object' ? (err as ErrorLike) : { message: String(err) };
  if (typeof e.code === 'number' && e.code >= 100 && e.code < 600) {
    return kubeErrorFromResponse(e.code, e.body, e.headers as Record<string, string> | undefined);
  }
  if (typeof e.statusCode === 'number')
    return kubeErrorFromResponse(e.statusCode, e.body, e.headers as Record<string, string> | undefined);
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (e.name === 'AbortError' || e.type === 'aborted' || e.name === 'TimeoutError') {
    return new KubeError(0, 'Timeout', `request timed out or was aborted: ${message}`);
  }
  const conn = connectionCode(e);
  if (conn) return new KubeError(0, conn, message);
  if (e.type === 'system' || e.name === 'FetchError') return new KubeError(0, 'ConnectionError', message);
  return new KubeError(0, 'Unknown', message);
}

/**
 * For commands: a KubeError as the KwaveError the CLI renders: a refusal (403) is exit 2 naming the
 * missing permission; anything else exit 1 (not a bug report).
 */
export function kubeErrorToKwave(err: KubeError, doing: string): KwaveError {
  if (err.code === 403) {
    const what = err.target ? forbiddenMessage(err.target) : `forbidden: ${err.message}`;
    return new KwaveError('KUBE', `${what} (${doing})`, ExitCode.BAD_INPUT);
  }
  const what = err.code === 0 ? err.reason : `HTTP ${err.code} ${err.reason}`;
  return new KwaveError('KUBE', `${doing}: ${err.message} (${what})`, ExitCode.INTERNAL);
}

/**
 * Runs `f` for a command: a KubeError it throws leaves as the KwaveError the CLI renders
 * (kubeErrorToKwave), saying what kwave was `doing`; anything else passes through unchanged.
 */
export async function wrapKube<T>(f: () => Promise<T>, doing: string): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw err instanceof KubeError ? kubeErrorToKwave(err, doing) : err;
  }
}

/** True when the error says these credentials may not do it (403), as opposed to a broken call. */
export function isForbidden(err: unknown): err is KubeError {
  return err instanceof KubeError && err.code === 403;
}
