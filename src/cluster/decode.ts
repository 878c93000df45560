// Watch events arrive as raw JSON, while client-node's typed calls return its model classes
// (timestamps as Date, and so on). The pod cache mixes both — watch events and the objects our own
// writes return — so raw objects are decoded with client-node's own deserializer to keep one shape.
// The serializer is not exported from the package root, hence the deep import (client-node 1.4
// declares no "exports" map, so the path is reachable; pinned by package.json).
//
// What comes off the wire is checked first: the deserializer passes `null` through, throws on a
// mapping where a list belongs, and keeps `null` list entries, and the in-place flow reads those
// fields without guards. A body that is not a pod (a Status, a list, a wrong type) is refused here
// with a reason, as client-go refuses an event it cannot decode into the watched type.
import type { V1Pod } from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import type { PodWatchEvent } from './cluster.js';
import { KubeError, kubeErrorFromResponse } from './kubeError.js';

export type DecodedPod = { ok: true; pod: V1Pod } | { ok: false; problem: string };

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

/** A pod as JSON (from a watch) → the V1Pod shape the typed calls return, or why it is not a pod. */
export function decodePod(raw: unknown): DecodedPod {
  const problem = podShapeProblem(raw);
  if (problem) return { ok: false, problem };
  try {
    return { ok: true, pod: ObjectSerializer.deserialize(raw, 'V1Pod', '') as V1Pod };
  } catch (err) {
    return { ok: false, problem: `cannot decode the pod: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * One line of a pod watch stream → the event kwave acts on; undefined for types it ignores (as
 * client-go does). An ADDED/MODIFIED/DELETED whose object is not a pod becomes an ERROR that ends
 * the stream, as client-go's decoder does; the watcher then watches again from the last version.
 */
export function podWatchEvent(type: unknown, object: unknown): PodWatchEvent | undefined {
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const decoded = decodePod(object);
      if (decoded.ok) return { type, pod: decoded.pod };
      return { type: 'ERROR', error: new KubeError(500, 'BadWatchEvent', `watch pods: a ${type} event that is not a pod: ${decoded.problem}`) };
    }
    case 'BOOKMARK': {
      const rv = (isRecord(object) && isRecord(object.metadata) ? object.metadata.resourceVersion : undefined) as unknown;
      return typeof rv === 'string' ? { type, resourceVersion: rv } : undefined;
    }
    case 'ERROR': {
      const code = isRecord(object) ? object.code : undefined;
      return { type, error: kubeErrorFromResponse(typeof code === 'number' ? code : 500, object) };
    }
    default:
      return undefined;
  }
}
