// Pod validation as kube-apiserver applies it: on create (names, containers, images), on update of
// the main resource (only images, activeDeadlineSeconds, added tolerations and a negative grace
// period set to 1 may change; anything else is Forbidden with a description of the change), and
// on update of pods/status (condition types must be qualified names).
import { defaultPodSpec } from '../defaults.js';
import { clone, deepEqual, isObject, type JsonObject } from '../json.js';
import type { FieldError } from '../status.js';
import { describeDiff } from './diff.js';
import { dns1123LabelError, qualifiedNameError } from './names.js';

export const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

const CONTAINER_LISTS = ['containers', 'initContainers'] as const;
const MAX_INT32 = 2 ** 31 - 1;

const listOf = (spec: JsonObject, name: string): JsonObject[] =>
  Array.isArray(spec[name]) ? (spec[name] as unknown[]).filter(isObject) : [];

export function validatePodCreate(pod: JsonObject): FieldError[] {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const errors: FieldError[] = [];
  if (listOf(spec, 'containers').length === 0) errors.push({ type: 'Required', field: 'spec.containers', detail: '' });
  const seen = new Set<string>();
  for (const list of CONTAINER_LISTS) {
    listOf(spec, list).forEach((c, i) => {
      const path = `spec.${list}[${i}]`;
      const name = typeof c.name === 'string' ? c.name : '';
      if (!name) errors.push({ type: 'Required', field: `${path}.name`, detail: '' });
      else {
        const err = dns1123LabelError(name);
        if (err) errors.push({ type: 'Invalid', field: `${path}.name`, value: name, detail: err });
        else if (seen.has(name)) errors.push({ type: 'Duplicate', field: `${path}.name`, value: name });
        seen.add(name);
      }
      if (typeof c.image !== 'string' || c.image.trim() === '')
        errors.push({ type: 'Required', field: `${path}.image`, detail: '' });
    });
  }
  listOf(spec, 'readinessGates').forEach((g, i) => {
    const t = typeof g.conditionType === 'string' ? g.conditionType : '';
    const err = qualifiedNameError(t);
    if (err) errors.push({ type: 'Invalid', field: `spec.readinessGates[${i}].conditionType`, value: t, detail: err });
  });
  return errors;
}

/** Old tolerations may only gain new ones; an existing one may change only its tolerationSeconds. */
function onlyAddedTolerations(oldSpec: JsonObject, newSpec: JsonObject): FieldError[] {
  const newer = listOf(newSpec, 'tolerations');
  for (const old of listOf(oldSpec, 'tolerations')) {
    const found = newer.some((n) => deepEqual({ ...old, tolerationSeconds: n.tolerationSeconds }, n));
    if (!found)
      return [
        {
          type: 'Forbidden',
          field: 'spec.tolerations',
          detail: 'existing toleration can not be modified except its tolerationSeconds',
        },
      ];
  }
  return [];
}

function activeDeadlineErrors(oldSpec: JsonObject, newSpec: JsonObject): FieldError[] {
  const field = 'spec.activeDeadlineSeconds';
  const next = newSpec.activeDeadlineSeconds;
  const prev = oldSpec.activeDeadlineSeconds;
  if (next !== undefined && next !== null) {
    if (typeof next !== 'number' || next < 0 || next > MAX_INT32) {
      return [{ type: 'Invalid', field, value: next, detail: `must be between 0 and ${MAX_INT32}, inclusive` }];
    }
    if (typeof prev === 'number' && prev < next)
      return [{ type: 'Invalid', field, value: next, detail: 'must be less than or equal to previous value' }];
  } else if (prev !== undefined && prev !== null) {
    return [{ type: 'Invalid', field, value: null, detail: 'must not update from a positive integer to nil value' }];
  }
  return [];
}

/**
 * The errors of an update of `pods` from `oldPod` to `newPod` (metadata is checked elsewhere). Old
 * and new specs are compared after defaulting, so a field left out of a PUT that its default fills
 * is not a change.
 */
export function validatePodUpdate(oldPod: JsonObject, newPod: JsonObject): FieldError[] {
  const oldSpec = isObject(oldPod.spec) ? oldPod.spec : {};
  const newSpec = isObject(newPod.spec) ? newPod.spec : {};
  for (const list of CONTAINER_LISTS) {
    if (listOf(oldSpec, list).length !== listOf(newSpec, list).length) {
      // A pod must keep at least one container: kube-apiserver says so first.
      const required: FieldError[] =
        list === 'containers' && listOf(newSpec, list).length === 0
          ? [{ type: 'Required', field: 'spec.containers', detail: '' }]
          : [];
      return [
        ...required,
        { type: 'Forbidden', field: `spec.${list}`, detail: 'pod updates may not add or remove containers' },
      ];
    }
  }
  const errors: FieldError[] = [];
  for (const list of CONTAINER_LISTS) {
    listOf(newSpec, list).forEach((c, i) => {
      if (typeof c.image !== 'string' || c.image === '')
        errors.push({ type: 'Required', field: `spec.${list}[${i}].image`, detail: '' });
    });
  }
  errors.push(...activeDeadlineErrors(oldSpec, newSpec));
  errors.push(...onlyAddedTolerations(oldSpec, newSpec));

  // Put back what may change; whatever still differs is forbidden.
  const munged = clone(newSpec);
  for (const list of CONTAINER_LISTS) {
    const olds = listOf(oldSpec, list);
    listOf(munged, list).forEach((c, i) => {
      const oldImage = olds[i]?.image;
      if (oldImage === undefined) delete c.image;
      else c.image = oldImage;
    });
  }
  for (const field of ['activeDeadlineSeconds', 'tolerations'] as const) {
    if (oldSpec[field] === undefined) delete munged[field];
    else munged[field] = clone(oldSpec[field]!);
  }
  const oldGrace = oldSpec.terminationGracePeriodSeconds;
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1)
    munged.terminationGracePeriodSeconds = oldGrace;

  const before = defaultPodSpec(oldSpec);
  const after = defaultPodSpec(munged);
  if (!deepEqual(before, after)) {
    errors.push({
      type: 'Forbidden',
      field: 'spec',
      detail: `${POD_UPDATE_FORBIDDEN}\n${describeDiff(before, after, 'spec')}`,
    });
  }
  return errors;
}

/** Pod conditions that are not the system's own must have qualified names as types. */
export function validatePodStatus(pod: JsonObject): FieldError[] {
  const status = isObject(pod.status) ? pod.status : {};
  const errors: FieldError[] = [];
  listOf(status, 'conditions').forEach((c, i) => {
    const type = typeof c.type === 'string' ? c.type : '';
    if (type === 'PodScheduled' || type === 'Ready' || type === 'Initialized') return;
    const err = qualifiedNameError(type);
    // kube-apiserver names the field `Type` here (its path is built with the Go field name).
    if (err) errors.push({ type: 'Invalid', field: `status.conditions[${i}].Type`, value: type, detail: err });
  });
  return errors;
}
