// What kube-apiserver fills in on a pod it is asked to create (defaulting plus the default
// admission plugins' visible effects), and the QoS class it records in status.
import { clone, isObject, type JsonObject } from './json.js';

/** The image pull policy the API defaults: Always for `:latest` or untagged images, else IfNotPresent. */
export function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  const tag = colon >= 0 ? lastSegment.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: JsonObject): void {
  if (typeof c.image === 'string' && c.imagePullPolicy === undefined) c.imagePullPolicy = defaultPullPolicy(c.image);
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
  const res = c.resources;
  // Requests default to limits where only limits are given.
  if (isObject(res) && isObject(res.limits)) {
    const requests = isObject(res.requests) ? res.requests : {};
    for (const [k, v] of Object.entries(res.limits)) requests[k] ??= v;
    res.requests = requests;
  }
  if (Array.isArray(c.ports)) for (const p of c.ports) if (isObject(p)) p.protocol ??= 'TCP';
}

const NOT_READY_TOLERATIONS: JsonObject[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

/** A defaulted copy of a pod spec. Idempotent, so it also makes old and new specs comparable. */
export function defaultPodSpec(spec: JsonObject): JsonObject {
  const s = clone(spec);
  s.restartPolicy ??= 'Always';
  s.terminationGracePeriodSeconds ??= 30;
  s.dnsPolicy ??= 'ClusterFirst';
  s.schedulerName ??= 'default-scheduler';
  s.securityContext ??= {};
  s.enableServiceLinks ??= true;
  s.preemptionPolicy ??= 'PreemptLowerPriority';
  s.priority ??= 0;
  for (const list of ['containers', 'initContainers'] as const) {
    const cs = s[list];
    if (Array.isArray(cs)) for (const c of cs) if (isObject(c)) defaultContainer(c);
  }
  return s;
}

/**
 * The DefaultTolerationSeconds admission plugin: tolerate a not-ready or unreachable node for 5
 * minutes unless the pod already says otherwise. `only` limits it to the given keys (on update,
 * those the stored pod has, so pods placed in the store without them are not changed).
 */
export function addDefaultTolerations(spec: JsonObject, only?: (key: string) => boolean): void {
  const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  for (const t of NOT_READY_TOLERATIONS) {
    if (only && !only(String(t.key))) continue;
    if (!tolerations.some((x) => isObject(x) && x.key === t.key && (x.effect === undefined || x.effect === 'NoExecute'))) tolerations.push(clone(t));
  }
  if (tolerations.length || spec.tolerations !== undefined) spec.tolerations = tolerations;
}

/** Defaults a pod being created, as the API server and its default admission plugins do. */
export function defaultNewPod(pod: JsonObject): JsonObject {
  const p = clone(pod);
  const spec = defaultPodSpec(isObject(p.spec) ? p.spec : {});
  addDefaultTolerations(spec);
  p.spec = spec;
  p.status = { phase: 'Pending', qosClass: qosClassOf(spec) };
  return p;
}

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A resource quantity (`100m`, `1Gi`, `0.5`) as a number, or NaN. */
export function parseQuantity(q: unknown): number {
  if (typeof q === 'number') return q;
  if (typeof q !== 'string') return NaN;
  const m = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.exec(q.trim());
  if (!m) return NaN;
  return Number(m[1]) * SUFFIX[m[2] ?? '']!;
}

/** Guaranteed, Burstable or BestEffort, from the containers' CPU and memory requests and limits. */
export function qosClassOf(spec: JsonObject): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])].filter(isObject);
  let anySet = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isObject(c.resources) ? c.resources : {};
    const requests = isObject(res.requests) ? res.requests : {};
    const limits = isObject(res.limits) ? res.limits : {};
    for (const r of ['cpu', 'memory']) {
      const req = requests[r] ?? limits[r];
      const lim = limits[r];
      if (req !== undefined || lim !== undefined) anySet = true;
      if (lim === undefined || parseQuantity(req) !== parseQuantity(lim)) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
