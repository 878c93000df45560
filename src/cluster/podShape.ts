// Whether a body off the wire can be a pod: the fields kwave reads have their types. Pure.
// A body that is not a pod (a Status, a list, a wrong type) is refused with a reason, as client-go
// refuses an event it cannot decode into the watched type; the in-place flow then never meets a
// `null` list entry or a mapping where a list belongs.
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = obj[key];
  return v === undefined || v === null || typeof v === 'string' ? undefined : `${where}.${key} is ${typeName(v)}, not a string`;
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
  for (const [k, value] of Object.entries(v)) if (typeof value !== 'string') return `${where}.${key}[${JSON.stringify(k)}] is ${typeName(value)}, not a string`;
  return undefined;
}

/** A list of mappings whose `stringKeys` are strings when present (`name` of a container, `type` of a condition). */
function listOfRecords(obj: Record<string, unknown>, key: string, where: string, stringKeys: string[]): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) return `${where}.${key} is ${typeName(v)}, not a list`;
  for (const [i, item] of v.entries()) {
    if (!isRecord(item)) return `${where}.${key}[${i}] is ${typeName(item)}, not a mapping`;
    for (const k of stringKeys) {
      const bad = optionalString(item, k, `${where}.${key}[${i}]`);
      if (bad) return bad;
    }
  }
  return undefined;
}

/** Why `raw` cannot be a pod, or undefined when the fields kwave reads have their types. */
export function podShapeProblem(raw: unknown): string | undefined {
  if (!isRecord(raw)) return `expected a Pod object, found ${typeName(raw)}`;
  if (raw.kind !== undefined && raw.kind !== 'Pod') return `expected a Pod object, found kind ${JSON.stringify(raw.kind)}`;
  const meta = raw.metadata;
  if (!isRecord(meta)) return `expected a Pod object with metadata, found metadata ${typeName(meta)}`;
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion']) {
    const bad = optionalString(meta, k, 'metadata');
    if (bad) return bad;
  }
  if (typeof meta.name !== 'string' || meta.name === '') return 'expected a Pod object with metadata.name';
  const problems = [stringMap(meta, 'labels', 'metadata'), stringMap(meta, 'annotations', 'metadata')];
  const spec = raw.spec;
  if (spec !== undefined && spec !== null) {
    if (!isRecord(spec)) return `spec is ${typeName(spec)}, not a mapping`;
    problems.push(
      listOfRecords(spec, 'containers', 'spec', ['name', 'image']),
      listOfRecords(spec, 'initContainers', 'spec', ['name', 'image']),
      listOfRecords(spec, 'readinessGates', 'spec', ['conditionType']),
      optionalString(spec, 'nodeName', 'spec'),
    );
  }
  const status = raw.status;
  if (status !== undefined && status !== null) {
    if (!isRecord(status)) return `status is ${typeName(status)}, not a mapping`;
    problems.push(
      listOfRecords(status, 'containerStatuses', 'status', ['name', 'image', 'imageID', 'containerID']),
      listOfRecords(status, 'initContainerStatuses', 'status', ['name', 'image', 'imageID', 'containerID']),
      listOfRecords(status, 'conditions', 'status', ['type', 'status', 'reason', 'message']),
      optionalString(status, 'phase', 'status'),
    );
  }
  return problems.find((p) => p !== undefined);
}
