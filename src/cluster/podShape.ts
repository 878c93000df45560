// Whether a body off the wire can be a pod: the fields kwave reads have their types. Pure.
// A body that is not a pod (a Status, a list, a wrong type) is refused with a reason, as client-go
// refuses an event it cannot decode into the watched type; the in-place flow then never meets a
// `null` list entry or a mapping where a list belongs.
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether obj[key] is absent, null or a string. */
const stringOrAbsent = (obj: Record<string, unknown>, key: string): boolean => {
  const v = obj[key];
  return v === undefined || v === null || typeof v === 'string';
};

function optionalString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  return stringOrAbsent(obj, key) ? undefined : `${where}.${key} is ${typeName(obj[key])}, not a string`;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'a mapping' : `a ${typeof v}`;
}

function stringMap(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) return `${where}.${key} is ${typeName(v)}, not a mapping`;
  for (const k in v)
    if (typeof v[k] !== 'string') return `${where}.${key}[${JSON.stringify(k)}] is ${typeName(v[k])}, not a string`;
  return undefined;
}

/** A list of mappings whose `stringKeys` are strings when present (`name` of a container, `type` of a condition). */
function listOfRecords(
  obj: Record<string, unknown>,
  key: string,
  where: string,
  stringKeys: readonly string[],
): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) return `${where}.${key} is ${typeName(v)}, not a list`;
  for (let i = 0; i < v.length; i++) {
    const item: unknown = v[i];
    if (!isRecord(item)) return `${where}.${key}[${i}] is ${typeName(item)}, not a mapping`;
    // The place is spelled out only for a problem: this runs for every item of every pod.
    for (const k of stringKeys) if (!stringOrAbsent(item, k)) return optionalString(item, k, `${where}.${key}[${i}]`);
  }
  return undefined;
}

// The string fields checked, made once: this runs for every pod of every list and watch event.
const METADATA_KEYS = ['name', 'namespace', 'uid', 'resourceVersion'];
const CONTAINER_KEYS = ['name', 'image'];
const GATE_KEYS = ['conditionType'];
const CONTAINER_STATUS_KEYS = ['name', 'image', 'imageID', 'containerID'];
const CONDITION_KEYS = ['type', 'status', 'reason', 'message'];

/** Why `raw` cannot be a pod, or undefined when the fields kwave reads have their types. */
export function podShapeProblem(raw: unknown): string | undefined {
  if (!isRecord(raw)) return `expected a Pod object, found ${typeName(raw)}`;
  if (raw.kind !== undefined && raw.kind !== 'Pod')
    return `expected a Pod object, found kind ${JSON.stringify(raw.kind)}`;
  const meta = raw.metadata;
  if (!isRecord(meta)) return `expected a Pod object with metadata, found metadata ${typeName(meta)}`;
  for (const k of METADATA_KEYS) {
    const bad = optionalString(meta, k, 'metadata');
    if (bad) return bad;
  }
  if (typeof meta.name !== 'string' || meta.name === '') return 'expected a Pod object with metadata.name';
  const spec = raw.spec === null ? undefined : raw.spec;
  if (spec !== undefined && !isRecord(spec)) return `spec is ${typeName(spec)}, not a mapping`;
  const status = raw.status === null ? undefined : raw.status;
  if (status !== undefined && !isRecord(status)) return `status is ${typeName(status)}, not a mapping`;
  // The first problem in this order; each check runs only if those before it found none.
  return (
    stringMap(meta, 'labels', 'metadata') ??
    stringMap(meta, 'annotations', 'metadata') ??
    (spec &&
      (listOfRecords(spec, 'containers', 'spec', CONTAINER_KEYS) ??
        listOfRecords(spec, 'initContainers', 'spec', CONTAINER_KEYS) ??
        listOfRecords(spec, 'readinessGates', 'spec', GATE_KEYS) ??
        optionalString(spec, 'nodeName', 'spec'))) ??
    (status &&
      (listOfRecords(status, 'containerStatuses', 'status', CONTAINER_STATUS_KEYS) ??
        listOfRecords(status, 'initContainerStatuses', 'status', CONTAINER_STATUS_KEYS) ??
        listOfRecords(status, 'conditions', 'status', CONDITION_KEYS) ??
        optionalString(status, 'phase', 'status')))
  );
}
