// A pod's `status` decoded the way kube-apiserver decodes every body into its typed structs
// before anything else looks at it (docs/sim-api.md, "Pods: what may change"): a value of the wrong JSON type (a
// condition `status` of `true`, a `restartCount` of "1") or a time that is not RFC 3339 is
// refused; a field the type does not have is dropped; a metav1.Time keeps whole seconds only
// (the fraction is cut, not rounded). Without it the simulator would store what kwave wrote, and a
// test could pass against leniency a real cluster does not have.
//
// Only `status` is typed here: it is where kwave (and the kubelet) write free-form values;
// spec and metadata changes already go through the validation in validation/pod.ts.
import { frozenCopy } from '../store.js';
import { deepEqual, isObject, type Json, type JsonObject } from './json.js';

/** The shapes a status field can have; `raw` is kept as sent (quantities, nested specs). */
type FieldType = 'string' | 'bool' | 'int' | 'time' | 'raw' | StructType | ListType;

/** Frozen values of a struct or list type already decoded, and their decoded form. */
type Decoded = WeakMap<object, Json>;

interface StructType {
  struct: string;
  fields: Readonly<Record<string, FieldType>>;
  /** Its non-pointer metav1.Time fields: always encoded, as null when unset (omitempty does not omit structs). */
  nullTimes: readonly string[];
  decoded: Decoded;
}

interface ListType {
  list: FieldType;
  decoded: Decoded;
}

const struct = (name: string, fields: Record<string, FieldType>): StructType => ({
  struct: name,
  fields,
  nullTimes: Object.keys(fields).filter((k) => fields[k] === 'time' && !POINTER_TIMES.has(k)),
  decoded: new WeakMap(),
});
const list = (of: FieldType): ListType => ({ list: of, decoded: new WeakMap() });

/** metav1.Time fields that are pointers (*metav1.Time) in PodStatus, so left out when unset. */
const POINTER_TIMES = new Set(['startTime']);

const CONTAINER_STATE = struct('ContainerState', {
  waiting: struct('ContainerStateWaiting', { reason: 'string', message: 'string' }),
  running: struct('ContainerStateRunning', { startedAt: 'time' }),
  terminated: struct('ContainerStateTerminated', {
    exitCode: 'int',
    signal: 'int',
    reason: 'string',
    message: 'string',
    startedAt: 'time',
    finishedAt: 'time',
    containerID: 'string',
  }),
});

const CONTAINER_STATUS = struct('ContainerStatus', {
  name: 'string',
  state: CONTAINER_STATE,
  lastState: CONTAINER_STATE,
  ready: 'bool',
  restartCount: 'int',
  image: 'string',
  imageID: 'string',
  containerID: 'string',
  started: 'bool',
  allocatedResources: 'raw',
  resources: 'raw',
  volumeMounts: 'raw',
  user: 'raw',
  allocatedResourcesStatus: 'raw',
});

/** core/v1 PodStatus as of Kubernetes 1.32, the version the fidelity tests run kubectl at. */
const POD_STATUS = struct('PodStatus', {
  phase: 'string',
  conditions: list(
    struct('PodCondition', {
      type: 'string',
      status: 'string',
      lastProbeTime: 'time',
      lastTransitionTime: 'time',
      reason: 'string',
      message: 'string',
    }),
  ),
  message: 'string',
  reason: 'string',
  nominatedNodeName: 'string',
  hostIP: 'string',
  hostIPs: list(struct('HostIP', { ip: 'string' })),
  podIP: 'string',
  podIPs: list(struct('PodIP', { ip: 'string' })),
  startTime: 'time',
  initContainerStatuses: list(CONTAINER_STATUS),
  containerStatuses: list(CONTAINER_STATUS),
  qosClass: 'string',
  ephemeralContainerStatuses: list(CONTAINER_STATUS),
  resize: 'string',
  resourceClaimStatuses: 'raw',
});

/**
 * A body that does not fit the type. The real server words it after the decoder that met it:
 * `json` as Go's JSON decoder does (create, replace, merge patches), `converter` as the
 * unstructured converter does (strategic merge patches).
 */
export class TypeMismatch extends Error {
  override name = 'TypeMismatch';
  constructor(
    readonly json: string,
    readonly converter: string,
  ) {
    super(json);
  }
}

/** Go's quoting of a string in time.Parse errors (close enough: JSON's escapes). */
const goQuote = (s: string) => JSON.stringify(s);

const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';
const DAYS_IN = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * time.Parse(time.RFC3339, value) as Go does it: the instant in ms, or the error Go gives
 * (`parsing time "x" as "<layout>": cannot parse "<rest>" as "<element>"`, `… month out of range`).
 */
function parseRfc3339(value: string): number | string {
  let rest = value;
  const cannot = (element: string) =>
    `parsing time ${goQuote(value)} as ${goQuote(RFC3339_LAYOUT)}: cannot parse ${goQuote(rest)} as ${goQuote(element)}`;
  const outOfRange = (what: string) => `parsing time ${goQuote(value)}: ${what} out of range`;
  const digits = (element: string, min: number, max: number): number | string => {
    const m = new RegExp(`^\\d{${min},${max}}`).exec(rest);
    if (!m) return cannot(element);
    rest = rest.slice(m[0].length);
    return Number(m[0]);
  };
  const literal = (text: string): string | undefined => {
    if (!rest.startsWith(text)) return cannot(text);
    rest = rest.slice(text.length);
    return undefined;
  };
  const parts: number[] = [];
  const steps: [string, string, number, number][] = [
    ['', '2006', 4, 4],
    ['-', '01', 2, 2],
    ['-', '02', 2, 2],
    ['T', '15', 1, 2],
    [':', '04', 2, 2],
    [':', '05', 2, 2],
  ];
  for (const [prefix, element, min, max] of steps) {
    const bad = prefix ? literal(prefix) : undefined;
    if (bad) return bad;
    const n = digits(element, min, max);
    if (typeof n === 'string') return n;
    parts.push(n);
  }
  const [year, month, day, hour, minute, second] = parts as [number, number, number, number, number, number];
  let fractionMs = 0;
  const fraction = /^[.,](\d+)/.exec(rest);
  if (fraction) {
    fractionMs = Number(`0.${fraction[1]}`) * 1000;
    rest = rest.slice(fraction[0].length);
  }
  let offsetMinutes = 0;
  if (rest.startsWith('Z')) rest = rest.slice(1);
  else {
    const zone = /^([+-])(\d{2}):(\d{2})/.exec(rest);
    if (!zone) return cannot('Z07:00');
    offsetMinutes = (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3]));
    rest = rest.slice(zone[0].length);
  }
  if (month < 1 || month > 12) return outOfRange('month');
  if (day < 1 || day > 31) return outOfRange('day');
  if (hour > 23) return outOfRange('hour');
  if (minute > 59) return outOfRange('minute');
  if (second > 59) return outOfRange('second');
  if (rest !== '') return `parsing time ${goQuote(value)}: extra text: ${goQuote(rest)}`;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > DAYS_IN[month - 1]! || (month === 2 && day === 29 && !leap)) return outOfRange('day');
  return Date.UTC(year, month - 1, day, hour, minute, second) + Math.floor(fractionMs) - offsetMinutes * 60_000;
}

/** `2006-01-02T15:04:05Z`: the spelling every writer of the simulated cluster uses. */
const WHOLE_SECONDS_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

/**
 * A time already in the decoded spelling, with every field in range: it decodes to itself. Most
 * times of a status patch are (the kubelet's, kwave's), and parsing them was ~5 % of the
 * simulator's CPU in a rollout. Years before 100 take the long way (Date.UTC reads them as 19xx).
 */
function isDecodedTime(value: string): boolean {
  const m = WHOLE_SECONDS_UTC.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > DAYS_IN[month - 1]!) return false;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return false;
  return Number(m[4]) <= 23 && Number(m[5]) <= 59 && Number(m[6]) <= 59;
}

/** metav1.Time on the wire: RFC 3339 in, UTC whole seconds out. */
function decodeTime(value: string): string {
  if (isDecodedTime(value)) return value;
  const ms = parseRfc3339(value);
  if (typeof ms === 'string') throw new TypeMismatch(ms, ms);
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The JSON kind as Go's decoder names it. */
function jsonKind(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value === 'boolean' ? 'bool' : typeof value;
}

/** The Go kind the unstructured converter sees for a decoded JSON value. */
function unstructuredKind(value: Json): string {
  if (Array.isArray(value)) return 'slice';
  if (isObject(value)) return 'map';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return typeof value === 'boolean' ? 'bool' : 'string';
}

function goTypeOf(type: FieldType): string {
  if (type === 'string' || type === 'bool' || type === 'int') return type === 'int' ? 'int32' : type;
  if (type === 'time' || type === 'raw') return 'v1.Time';
  if ('list' in type) return `[]${goTypeOf(type.list)}`;
  return `v1.${type.struct}`;
}

/**
 * Where a field sits: the struct holding it, and its JSON path from the object's root (the
 * parent's path and its key, joined only for an error message: decoding visits every field).
 */
interface At {
  struct: string;
  parent: At | undefined;
  key: string;
}

const pathOf = (at: At): string => (at.parent ? `${pathOf(at.parent)}.${at.key}` : at.key);

/**
 * The decoded value, or undefined when the field is dropped (null for a non-pointer scalar). A
 * frozen value (a stored status's part that a patch left alone) is decoded once: its decoded form
 * is kept, and is the value itself when decoding changes nothing, so the write shares it.
 */
function decode(type: FieldType, value: Json, at: At): Json | undefined {
  if (typeof type === 'string' || typeof value !== 'object' || value === null || !Object.isFrozen(value))
    return decodeFresh(type, value, at);
  // A struct or a list decodes to an object or a list (or throws): never undefined.
  const known = type.decoded.get(value);
  if (known !== undefined) return known;
  const fresh = decodeFresh(type, value, at);
  const decoded = deepEqual(fresh, value) ? value : frozenCopy(fresh)!;
  type.decoded.set(value, decoded);
  return decoded;
}

function decodeFresh(type: FieldType, value: Json, at: At): Json | undefined {
  if (type === 'raw') return value;
  if (value === null) return type === 'time' ? null : undefined;
  const mismatch = (converter: string) =>
    new TypeMismatch(
      `json: cannot unmarshal ${jsonKind(value)} into Go struct field ${at.struct}.${pathOf(at)} of type ${goTypeOf(type)}`,
      converter,
    );
  if (type === 'string') {
    if (typeof value !== 'string') throw mismatch('unrecognized type: string');
    return value;
  }
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw mismatch('unrecognized type: bool');
    return value;
  }
  if (type === 'int') {
    // A fraction is refused by the JSON decoder; the converter (numbers as float64) would truncate it.
    if (typeof value === 'number' && !Number.isInteger(value))
      throw new TypeMismatch(
        `json: cannot unmarshal number ${value} into Go struct field ${at.struct}.${pathOf(at)} of type int32`,
        `cannot convert float64 to int32`,
      );
    if (typeof value !== 'number') throw mismatch('unrecognized type: int32');
    return value;
  }
  if (type === 'time') {
    if (typeof value !== 'string')
      throw new TypeMismatch(
        `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`,
        `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`,
      );
    return decodeTime(value);
  }
  if ('list' in type) {
    if (!Array.isArray(value)) throw mismatch(`cannot restore slice from ${unstructuredKind(value)}`);
    return value.map((item) => decode(type.list, item, at) ?? null);
  }
  if (!isObject(value)) throw mismatch(`cannot restore struct from: ${unstructuredKind(value)}`);
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const fieldType = type.fields[key];
    if (fieldType === undefined) continue; // unknown to the type: dropped, as the decoder does
    const decoded = decode(fieldType, value[key]!, { struct: type.struct, parent: at, key });
    if (decoded !== undefined) out[key] = decoded;
  }
  for (const key of type.nullTimes) if (!(key in out)) out[key] = null;
  return out;
}

/** The pod with its status decoded (see the header); throws TypeMismatch. */
export function decodePodStatus(pod: JsonObject): JsonObject {
  if (pod.status === undefined) return pod;
  const status = decode(POD_STATUS, pod.status, { struct: 'Pod', parent: undefined, key: 'status' });
  const out = { ...pod };
  if (status === undefined) delete out.status;
  else out.status = status;
  return out;
}
