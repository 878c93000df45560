// Per-resource write rules (what kube-apiserver's registry strategies do): what create fills in,
// what an update of the main resource or of `/status` keeps from the stored object, and which
// validation applies.
import { addDefaultTolerations, defaultNewPod } from './defaults.js';
import { clone, deepEqual, getPath, isObject, type JsonObject } from './json.js';
import type { ResourceInfo } from './resources.js';
import { APPS_RESOURCES } from '../store.js';
import type { FieldError } from './status.js';
import { validateLabelsAndAnnotations, validateName } from './validation/meta.js';
import { validatePdbSpec } from './validation/pdb.js';
import { validatePodCreate, validatePodStatus, validatePodUpdate } from './validation/pod.js';
import { prepareResize, validatePodResize } from './validation/podResize.js';

const HAS_STATUS = new Set(['pods', 'nodes', 'namespaces', 'poddisruptionbudgets', ...APPS_RESOURCES]);
/** Workloads: created with generation 1, counting spec changes (PDBs too, below; pods have none in 1.32). */
const HAS_GENERATION: ReadonlySet<string> = new Set(APPS_RESOURCES);

/** What a new PodDisruptionBudget's status is before the disruption controller has looked (its ints are not omitempty). */
const EMPTY_PDB_STATUS = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };

/** Fills in what the server sets on create; the result is validated next. */
export function prepareCreate(info: ResourceInfo, obj: JsonObject): JsonObject {
  const meta = obj.metadata as JsonObject;
  for (const k of [
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'selfLink',
    'managedFields',
  ])
    delete meta[k];
  if (HAS_GENERATION.has(info.resource)) {
    const out = clone(obj);
    (out.metadata as JsonObject).generation = 1;
    return out;
  }
  switch (info.resource) {
    case 'pods':
      return defaultNewPod(obj);
    case 'namespaces': {
      const out = clone(obj);
      const m = out.metadata as JsonObject;
      m.labels = { ...(isObject(m.labels) ? m.labels : {}), 'kubernetes.io/metadata.name': String(m.name) };
      out.spec = { finalizers: ['kubernetes'] };
      out.status = { phase: 'Active' };
      return out;
    }
    case 'poddisruptionbudgets': {
      // As the PDB strategy: status reset, generation 1 (the controller's observedGeneration follows it).
      const out = clone(obj);
      (out.metadata as JsonObject).generation = 1;
      out.status = { ...EMPTY_PDB_STATUS };
      return out;
    }
    default:
      return obj;
  }
}

export function validateCreate(info: ResourceInfo, obj: JsonObject): FieldError[] {
  const meta = obj.metadata as JsonObject;
  const errors = [
    ...validateName(
      meta.name as string | undefined,
      meta.generateName as string | undefined,
      info.resource === 'namespaces' ? 'label' : 'subdomain',
    ),
    ...validateLabelsAndAnnotations(meta),
  ];
  return [...errors, ...validateContent(info, obj)];
}

/** A ConfigMap's data and binaryData together (each key's bytes and its value's) may be at most 1 MiB. */
const MAX_CONFIGMAP_BYTES = 1024 * 1024;

function configMapSize(obj: JsonObject): FieldError[] {
  let total = 0;
  for (const part of ['data', 'binaryData']) {
    const entries = obj[part];
    if (typeof entries !== 'object' || entries === null) continue;
    for (const [key, value] of Object.entries(entries)) {
      // binaryData travels as base64: its size is the decoded bytes'.
      const bytes =
        typeof value !== 'string'
          ? 0
          : part === 'data'
            ? Buffer.byteLength(value)
            : Buffer.from(value, 'base64').length;
      total += Buffer.byteLength(key) + bytes;
    }
  }
  if (total <= MAX_CONFIGMAP_BYTES) return [];
  return [{ type: 'TooLong', field: '', detail: `may not be more than ${MAX_CONFIGMAP_BYTES} bytes` }];
}

function validateContent(info: ResourceInfo, obj: JsonObject): FieldError[] {
  switch (info.resource) {
    case 'pods':
      return validatePodCreate(obj);
    case 'events': {
      const ns = getPath(obj, ['involvedObject', 'namespace']);
      const own = getPath(obj, ['metadata', 'namespace']);
      if (obj.eventTime === undefined || obj.eventTime === null) {
        if (typeof ns === 'string' && ns !== '' && ns !== own)
          return [
            { type: 'Invalid', field: 'involvedObject.namespace', value: ns, detail: 'does not match event.namespace' },
          ];
      }
      return [];
    }
    case 'leases': {
      const errors: FieldError[] = [];
      const d = getPath(obj, ['spec', 'leaseDurationSeconds']);
      if (d !== undefined && d !== null && !(typeof d === 'number' && d > 0))
        errors.push({
          type: 'Invalid',
          field: 'spec.leaseDurationSeconds',
          value: d,
          detail: 'must be greater than 0',
        });
      const t = getPath(obj, ['spec', 'leaseTransitions']);
      if (t !== undefined && t !== null && !(typeof t === 'number' && t >= 0))
        errors.push({
          type: 'Invalid',
          field: 'spec.leaseTransitions',
          value: t,
          detail: 'must be greater than or equal to 0',
        });
      return errors;
    }
    case 'poddisruptionbudgets':
      return validatePdbSpec(obj);
    case 'configmaps':
      return configMapSize(obj);
    default:
      return [];
  }
}

/**
 * Merges what the client may not change back into `next`: server-owned metadata always; the
 * status for updates of the main resource; the spec (and for pods, ownerReferences) for updates
 * of `/status`.
 */
export function prepareUpdate(
  info: ResourceInfo,
  subresource: string | undefined,
  old: JsonObject,
  next: JsonObject,
): JsonObject {
  // pods/resize keeps all but the containers' resources and resize policies (validation/podResize.ts).
  if (info.resource === 'pods' && subresource === 'resize') return prepareResize(old, next);
  // Copies only the levels changed here: what is taken from `old` (frozen, stored) is shared.
  const out = { ...next };
  const meta: JsonObject = isObject(out.metadata) ? { ...out.metadata } : {};
  out.metadata = meta;
  const oldMeta = old.metadata as JsonObject;
  for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
    if (oldMeta[k] === undefined) delete meta[k];
    else meta[k] = oldMeta[k]!;
  }
  delete meta.selfLink;
  delete meta.managedFields;
  if (info.resource === 'poddisruptionbudgets' || HAS_GENERATION.has(info.resource)) {
    // metadata.generation is the server's: +1 when the spec changes, else kept.
    const generation = typeof oldMeta.generation === 'number' ? oldMeta.generation : 1;
    meta.generation = subresource === undefined && !deepEqual(out.spec, old.spec) ? generation + 1 : generation;
  }
  if (HAS_STATUS.has(info.resource)) {
    if (subresource === 'status') {
      if (old.spec === undefined) delete out.spec;
      else out.spec = old.spec;
      if (info.resource === 'pods') {
        if (oldMeta.ownerReferences === undefined) delete meta.ownerReferences;
        else meta.ownerReferences = oldMeta.ownerReferences;
      }
    } else if (old.status === undefined) delete out.status;
    else out.status = old.status;
  }
  if (info.resource === 'pods' && subresource === undefined && isObject(out.spec) && isObject(old.spec)) {
    // The admission plugin runs on updates too: a replace without the defaulted tolerations keeps them.
    const had = Array.isArray(old.spec.tolerations) ? old.spec.tolerations.filter(isObject).map((t) => t.key) : [];
    const spec: JsonObject = { ...out.spec };
    if (Array.isArray(spec.tolerations)) spec.tolerations = [...spec.tolerations];
    addDefaultTolerations(spec, (key) => had.includes(key));
    out.spec = spec;
  }
  return out;
}

export function validateUpdate(
  info: ResourceInfo,
  subresource: string | undefined,
  old: JsonObject,
  next: JsonObject,
): FieldError[] {
  const meta = next.metadata as JsonObject;
  const errors = validateLabelsAndAnnotations(meta);
  const oldMeta = old.metadata as JsonObject;
  if (oldMeta.deletionTimestamp !== undefined) {
    const before = Array.isArray(oldMeta.finalizers) ? oldMeta.finalizers : [];
    const after = Array.isArray(meta.finalizers) ? meta.finalizers : [];
    if (after.some((f) => !before.some((b) => deepEqual(b, f)))) {
      errors.push({
        type: 'Forbidden',
        field: 'metadata.finalizers',
        detail: 'no new finalizers can be added if the object is being deleted',
      });
    }
  }
  if (info.resource === 'pods') {
    if (subresource === 'status') errors.push(...validatePodStatus(next));
    else if (subresource === 'resize') errors.push(...validatePodResize(old, next));
    else errors.push(...validatePodUpdate(old, next));
  } else if (subresource !== 'status') errors.push(...validateContent(info, next));
  return errors;
}
