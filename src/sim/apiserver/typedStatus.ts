// A pod's `status` decoded the way kube-apiserver decodes every body into its typed structs
// before anything else looks at it (K8S-FACTS.md §10): a value of the wrong JSON type (a
// condition `status` of `true`, a `restartCount` of "1") or a time that is not RFC 3339 is
// refused; a field the type does not have is dropped; a metav1.Time keeps whole seconds only
// (the fraction is cut, not rounded). Without this the simulator stored what kwave wrote, and a
// test could pass against leniency a real cluster does not have.
//
// Only `status` is typed here: it is where kwave (and the kubelet) write free-form values;
// spec and metadata changes already go through the validation in validation/pod.ts.
import { isObject, type Json, type JsonObject } from './json.js';

/** The shapes a status field can have; `raw` is kept as sent (quantities, nested specs). */
type FieldType = 'string' | 'bool' | 'int' | 'time' | 'raw' | { struct: string; fields: Readonly<Record<string, FieldType>> } | { list: FieldType };

const struct = (name: string, fields: Record<string, FieldType>): FieldType => ({ struct: name, fields });
const list = (of: FieldType): FieldType => ({ list: of });

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

/** A body that does not fit the type: `path` is where, `detail` says what was found. */
export class TypeMismatch extends Error {
  override name = 'TypeMismatch';
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** metav1.Time on the wire: RFC 3339 in, UTC whole seconds out. */
function decodeTime(value: string, path: string): string {
  const ms = RFC3339.test(value) ? Date.parse(value.toUpperCase()) : Number.NaN;
  if (Number.isNaN(ms)) throw new TypeMismatch(path, `parsing time ${JSON.stringify(value)}: not an RFC 3339 time`);
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

function jsonKind(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value === 'boolean' ? 'bool' : typeof value;
}

/** The decoded value, or undefined when the field is dropped (null for a non-pointer scalar). */
function decode(type: FieldType, value: Json, path: string): Json | undefined {
  if (type === 'raw') return value;
  if (value === null) return type === 'time' ? null : undefined;
  const mismatch = (want: string) => new TypeMismatch(path, `cannot decode a JSON ${jsonKind(value)} into a ${want}`);
  if (type === 'string') {
    if (typeof value !== 'string') throw mismatch('string');
    return value;
  }
  if (type === 'bool') {
    if (typeof value !== 'boolean') throw mismatch('bool');
    return value;
  }
  if (type === 'int') {
    if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch('int32');
    return value;
  }
  if (type === 'time') {
    if (typeof value !== 'string') throw mismatch('metav1.Time (an RFC 3339 string)');
    return decodeTime(value, path);
  }
  if ('list' in type) {
    if (!Array.isArray(value)) throw mismatch('list');
    return value.map((item, i) => decode(type.list, item, `${path}[${i}]`) ?? null);
  }
  if (!isObject(value)) throw mismatch(`struct ${type.struct}`);
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const fieldType = type.fields[key];
    if (fieldType === undefined) continue; // unknown to the type: dropped, as the decoder does
    const decoded = decode(fieldType, item, `${path}.${key}`);
    if (decoded !== undefined) out[key] = decoded;
  }
  return out;
}

/** The pod with its status decoded (see the header); throws TypeMismatch. */
export function decodePodStatus(pod: JsonObject): JsonObject {
  if (pod.status === undefined) return pod;
  const status = decode(POD_STATUS, pod.status, 'status');
  const out = { ...pod };
  if (status === undefined) delete out.status;
  else out.status = status;
  return out;
}
