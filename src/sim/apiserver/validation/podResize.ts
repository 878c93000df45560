// The `pods/resize` subresource (in-place resize, Kubernetes 1.33) as kube-apiserver's resize
// strategy has it: a write keeps everything of the stored pod but the containers' `resources` and
// `resizePolicy` (metadata as for /status), and is validated so that only CPU and memory change,
// none is removed, a memory limit shrinks only with RestartContainer, requests stay within
// limits, the QoS class stays, and the pod's node reports resources (its kubelet can resize).
import { parseQuantity, qosClassOf } from '../defaults.js';
import { clone, deepEqual, isObject, type JsonObject } from '../json.js';
import type { FieldError } from '../status.js';

const listOf = (spec: JsonObject, name: string): JsonObject[] =>
  Array.isArray(spec[name]) ? (spec[name] as unknown[]).filter(isObject) : [];

const resourceLists = (c: JsonObject | undefined): { requests: JsonObject; limits: JsonObject } => {
  const res = isObject(c?.resources) ? c.resources : {};
  return {
    requests: isObject(res.requests) ? res.requests : {},
    limits: isObject(res.limits) ? res.limits : {},
  };
};

/** The stored pod with the new containers' resources and resize policies (when the containers line up). */
export function prepareResize(old: JsonObject, next: JsonObject): JsonObject {
  const oldSpec = isObject(old.spec) ? old.spec : {};
  const newSpec = isObject(next.spec) ? next.spec : {};
  const olds = listOf(oldSpec, 'containers');
  const news = listOf(newSpec, 'containers');
  const out: JsonObject = { ...old, metadata: { ...(old.metadata as JsonObject) } };
  if (olds.length !== news.length || olds.some((c, i) => c.name !== news[i]?.name)) {
    // Validation names the change; the containers are kept as sent so that it sees it.
    out.spec = { ...oldSpec, containers: clone(newSpec.containers ?? []) };
    return out;
  }
  out.spec = {
    ...oldSpec,
    containers: olds.map((c, i) => {
      const n = news[i] as JsonObject;
      const merged: JsonObject = { ...c };
      for (const key of ['resources', 'resizePolicy'] as const) {
        if (n[key] === undefined) delete merged[key];
        else merged[key] = clone(n[key]);
      }
      return merged;
    }),
  };
  return out;
}

export function validatePodResize(old: JsonObject, next: JsonObject): FieldError[] {
  const oldSpec = isObject(old.spec) ? old.spec : {};
  const newSpec = isObject(next.spec) ? next.spec : {};
  const olds = listOf(oldSpec, 'containers');
  const news = listOf(newSpec, 'containers');
  const errors: FieldError[] = [];
  news.forEach((c, i) => errors.push(...requestsWithinLimits(c, `spec.containers[${i}].resources`)));
  const status = isObject(old.status) ? old.status : {};
  if (qosClassOf(oldSpec) !== qosClassOf(newSpec))
    errors.push({
      type: 'Invalid',
      field: 'spec',
      value: status.qosClass ?? '',
      detail: 'Pod QOS Class may not change as a result of resizing',
    });
  const running = listOf(status, 'containerStatuses').find((s) => isObject(s.state) && isObject(s.state.running));
  if (running && running.resources === undefined)
    errors.push({ type: 'Forbidden', field: 'spec', detail: 'Pod running on node without support for resize' });
  if (olds.length !== news.length) {
    errors.push({
      type: 'Forbidden',
      field: 'spec.containers',
      detail: 'containers may not be added or removed on resize',
    });
    return errors;
  }
  const misnamed = olds.flatMap((c, i): FieldError[] =>
    news[i]?.name === c.name
      ? []
      : [
          {
            type: 'Forbidden',
            field: `spec.containers[${i}].name`,
            detail: 'containers may not be renamed or reordered on resize',
          },
        ],
  );
  if (misnamed.length) return [...errors, ...misnamed];
  olds.forEach((c, i) => errors.push(...containerResize(c, news[i] as JsonObject, `spec.containers[${i}].resources`)));
  if (errors.length) return errors;
  // Besides CPU and memory, nothing may change.
  const cpuMemoryOnly = olds.some((c, i) => !deepEqual(withoutCpuMemory(c), withoutCpuMemory(news[i] as JsonObject)));
  if (cpuMemoryOnly)
    errors.push({ type: 'Forbidden', field: 'spec', detail: 'only cpu and memory resources are mutable' });
  return errors;
}

function requestsWithinLimits(c: JsonObject, path: string): FieldError[] {
  const { requests, limits } = resourceLists(c);
  return Object.entries(requests).flatMap(([name, q]): FieldError[] => {
    const limit = limits[name];
    if (limit === undefined || !(parseQuantity(q) > parseQuantity(limit))) return [];
    return [
      {
        type: 'Invalid',
        field: `${path}.requests[${name}]`,
        value: String(q),
        detail: `must be less than or equal to ${name} limit of ${String(limit)}`,
      },
    ];
  });
}

function containerResize(old: JsonObject, next: JsonObject, path: string): FieldError[] {
  const before = resourceLists(old);
  const after = resourceLists(next);
  const errors: FieldError[] = [];
  for (const kind of ['requests', 'limits'] as const) {
    if (Object.keys(before[kind]).some((name) => after[kind][name] === undefined))
      errors.push({ type: 'Forbidden', field: `${path}.${kind}`, detail: `resource ${kind} cannot be removed` });
  }
  const policies = listOf(next, 'resizePolicy');
  const memoryPolicy = policies.find((p) => p.resourceName === 'memory')?.restartPolicy;
  if (memoryPolicy === undefined || memoryPolicy === 'NotRequired') {
    const was = before.limits.memory;
    const now = after.limits.memory;
    if (now !== undefined && was !== undefined && parseQuantity(now) < parseQuantity(was))
      errors.push({
        type: 'Forbidden',
        field: `${path}.limits[memory]`,
        detail: 'memory limits cannot be decreased unless resizePolicy is RestartContainer',
      });
    else if (now !== undefined && was === undefined)
      errors.push({
        type: 'Forbidden',
        field: `${path}.limits[memory]`,
        detail: 'memory limits cannot be added unless resizePolicy is RestartContainer',
      });
  }
  return errors;
}

/** A container with CPU and memory taken out of its requests and limits (and its resize policy). */
function withoutCpuMemory(c: JsonObject): JsonObject {
  const out = clone(c);
  delete out.resizePolicy;
  const res = isObject(out.resources) ? out.resources : undefined;
  if (res)
    for (const kind of ['requests', 'limits'] as const) {
      const list = res[kind];
      if (!isObject(list)) continue;
      delete list.cpu;
      delete list.memory;
      if (Object.keys(list).length === 0) delete res[kind];
    }
  if (res && Object.keys(res).length === 0) delete out.resources;
  return out;
}
