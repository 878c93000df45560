// `Status` objects: the body of every error the API server sends, and of some successful deletes.
// The reasons, codes and message shapes are those kube-apiserver uses, so clients that branch on
// them (client-go's IsConflict, kubectl's messages, kwave's retry logic) behave as against a real
// cluster.
import type { ResourceInfo } from './resources.js';

interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A refusal carried up to the HTTP layer, which sends `status` with `status.code`. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: Status,
    readonly headers: Record<string, string> = {},
  ) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
  }
}

export function failure(code: number, reason: string | undefined, message: string, details?: StatusDetails): Status {
  // Members in the order the real server writes them: message, reason, details, code.
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason ? { reason } : {}),
    ...(details ? { details } : {}),
    code,
  };
}

/** `pods` for core resources, `leases.coordination.k8s.io` for the others, as messages print them. */
function qualifiedResource(info: ResourceInfo): string {
  return info.group ? `${info.plural}.${info.group}` : info.plural;
}

function detailsFor(info: ResourceInfo, name: string): StatusDetails {
  return info.group ? { name, group: info.group, kind: info.plural } : { name, kind: info.plural };
}

export const notFound = (info: ResourceInfo, name: string) =>
  new ApiError(failure(404, 'NotFound', `${qualifiedResource(info)} "${name}" not found`, detailsFor(info, name)));

export const alreadyExists = (info: ResourceInfo, name: string) =>
  new ApiError(
    failure(409, 'AlreadyExists', `${qualifiedResource(info)} "${name}" already exists`, detailsFor(info, name)),
  );

export const conflict = (
  info: ResourceInfo,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
) =>
  new ApiError(
    failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(info)} "${name}": ${why}`,
      detailsFor(info, name),
    ),
  );

export const badRequest = (message: string) => new ApiError(failure(400, 'BadRequest', message));

export const unauthorized = () => new ApiError(failure(401, 'Unauthorized', 'Unauthorized'));

/**
 * A request without credentials, as kube-apiserver answers it with its default
 * --anonymous-auth=true and RBAC: authenticated as system:anonymous, then forbidden (403, not
 * 401; a wrong token is the 401). `what` is `resource "pods" in API group "" in the namespace "web"`
 * or `path "/api"`; `kind` names the resource in details.
 */
export const anonymousForbidden = (verb: string, what: string, kind?: string) =>
  new ApiError(
    failure(
      403,
      'Forbidden',
      `${kind ? `${kind} is forbidden` : 'forbidden'}: User "system:anonymous" cannot ${verb} ${what}`,
      kind ? { kind } : undefined,
    ),
  );

export const pathNotFound = () =>
  new ApiError(failure(404, 'NotFound', 'the server could not find the requested resource', {}));

export const methodNotAllowed = () =>
  new ApiError(failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}));

export const notAcceptable = (accepted: string) =>
  new ApiError(failure(406, 'NotAcceptable', `only the following media types are accepted: ${accepted}`, {}));

export const unsupportedMediaType = (contentType: string, accepted: readonly string[]) =>
  new ApiError(
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      {},
    ),
    {
      'x-kwave-sim-content-type': contentType,
    },
  );

export const gone = (message: string) => new ApiError(failure(410, 'Expired', message));

/** The error a plain Go `error` becomes: code 500, no reason, the raw text as message. */
export const unknownInternal = (message: string) => new ApiError(failure(500, undefined, message));

export const internalError = (message: string) =>
  new ApiError(failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }));

/** A JSON-patch that cannot be applied: the generic 422 the real server answers with. */
export const unprocessable = (message: string) =>
  new ApiError(
    failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {
      causes: [{ reason: 'UnexpectedServerResponse', message }],
    }),
  );

export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(failure(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds }), {
    'Retry-After': String(retryAfterSeconds),
  });

export const serviceUnavailable = () =>
  new ApiError(
    failure(503, 'ServiceUnavailable', 'the server is currently unable to handle the request (simulated fault)', {}),
  );

export const timeout = (message: string) => new ApiError(failure(504, 'Timeout', message, { retryAfterSeconds: 1 }));

export function success(info: ResourceInfo, name: string, uid: string | undefined): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, ...(info.group ? { group: info.group } : {}), kind: info.plural, ...(uid ? { uid } : {}) },
    code: 200,
  };
}

// --- field errors (validation), rendered as `Kind "name" is invalid: ...` --------------------

type FieldErrorType = 'Invalid' | 'Required' | 'Forbidden' | 'NotSupported' | 'Duplicate' | 'TooLong';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  detail?: string;
  /** For Invalid / NotSupported / Duplicate: the offending value, printed in the message. */
  value?: unknown;
  /** The value as printed already (Go prints some, e.g. an unsigned 0 as `0x0`). */
  rawValue?: string;
}

const CAUSE_REASON: Record<FieldErrorType, string> = {
  Invalid: 'FieldValueInvalid',
  Required: 'FieldValueRequired',
  Forbidden: 'FieldValueForbidden',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
};

const TYPE_TEXT: Record<FieldErrorType, string> = {
  Invalid: 'Invalid value',
  Required: 'Required value',
  Forbidden: 'Forbidden',
  NotSupported: 'Unsupported value',
  Duplicate: 'Duplicate value',
  TooLong: 'Too long',
};

function printValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The error's own text, without the field: `Invalid value: "x": must be ...`. */
function fieldErrorBody(e: FieldError): string {
  const hasValue = e.type === 'Invalid' || e.type === 'NotSupported' || e.type === 'Duplicate';
  let s = TYPE_TEXT[e.type];
  if (hasValue) s += `: ${e.rawValue ?? printValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export const fieldErrorText = (e: FieldError) => `${e.field}: ${fieldErrorBody(e)}`;

/** 422 Invalid for one or more field errors, e.g. `Pod "x" is invalid: spec: Forbidden: ...`. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const texts = errors.map(fieldErrorText);
  const what = group ? `${kind}.${group}` : kind;
  const list = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
  return new ApiError(
    failure(422, 'Invalid', `${what} "${name}" is invalid: ${list}`, {
      // Empty ones are left out, as the real Status's omitempty does.
      ...(name ? { name } : {}),
      ...(group ? { group } : {}),
      ...(kind ? { kind } : {}),
      causes: errors.map((e) => ({ reason: CAUSE_REASON[e.type], message: fieldErrorBody(e), field: e.field })),
    }),
  );
}
