// What kube-apiserver fills in on a pod it is asked to create (defaulting plus the default
// admission plugins' visible effects), and the QoS class it records in status.
import { frozenCopy } from '../store.js';
import { clone, isObject, type JsonObject } from './json.js';
import { parseQuantity as quantityValue } from '../../quantity.js';

/** The image pull policy the API defaults: Always for `:latest` or untagged images, else IfNotPresent. */
function defaultPullPolicy(image: string): string {
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
    if (
      !tolerations.some((x) => isObject(x) && x.key === t.key && (x.effect === undefined || x.effect === 'NoExecute'))
    )
      tolerations.push(clone(t));
  }
  if (tolerations.length || spec.tolerations !== undefined) spec.tolerations = tolerations;
}

/** The characters Kubernetes draws generated name suffixes from (no vowels, no look-alikes). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A random 5-character suffix, as generated names (`kube-api-access-xxxxx`) have. */
function nameSuffix(random: () => number = Math.random): string {
  let out = '';
  for (let i = 0; i < 5; i++) out += SUFFIX_ALPHABET[Math.floor(random() * SUFFIX_ALPHABET.length)];
  return out;
}

/**
 * The same in every pod, so shared: frozen, the store keeps it as it is (the projection was 700
 * bytes of each of 50,000 pods).
 */
const SERVICE_ACCOUNT_PROJECTION = frozenCopy<JsonObject>({
  defaultMode: 420,
  sources: [
    { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    {
      downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] },
    },
  ],
});

/**
 * The ServiceAccount admission plugin: the pod runs as `default` unless it names an account, and
 * unless it opts out (`automountServiceAccountToken: false`) gets a projected volume
 * `kube-api-access-xxxxx` (token, cluster CA, namespace) mounted read-only in every container at
 * /var/run/secrets/kubernetes.io/serviceaccount. Such a pod's spec then holds fields its manifest
 * lacks — a `kubectl replace` of the bare manifest is a forbidden pod update, as on a real cluster.
 */
export function addServiceAccount(spec: JsonObject, random: () => number = Math.random): void {
  const account =
    typeof spec.serviceAccountName === 'string' && spec.serviceAccountName
      ? spec.serviceAccountName
      : typeof spec.serviceAccount === 'string' && spec.serviceAccount
        ? spec.serviceAccount
        : 'default';
  spec.serviceAccountName = account;
  spec.serviceAccount = account;
  if (spec.automountServiceAccountToken === false) return;
  const containers = ['initContainers', 'containers'].flatMap((list) =>
    Array.isArray(spec[list]) ? (spec[list] as unknown[]).filter(isObject) : [],
  );
  const mounted = (c: JsonObject) =>
    Array.isArray(c.volumeMounts) && c.volumeMounts.some((m) => isObject(m) && m.mountPath === SERVICE_ACCOUNT_MOUNT);
  if (containers.length > 0 && containers.every(mounted)) return;
  const name = `kube-api-access-${nameSuffix(random)}`;
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  volumes.push({ name, projected: SERVICE_ACCOUNT_PROJECTION });
  spec.volumes = volumes;
  for (const c of containers) {
    if (mounted(c)) continue;
    const mounts = Array.isArray(c.volumeMounts) ? c.volumeMounts : [];
    mounts.push({ name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT });
    c.volumeMounts = mounts;
  }
}

/** Defaults a pod being created, as the API server and its default admission plugins do. */
export function defaultNewPod(pod: JsonObject): JsonObject {
  const p = clone(pod);
  const spec = defaultPodSpec(isObject(p.spec) ? p.spec : {});
  addDefaultTolerations(spec);
  addServiceAccount(spec);
  p.spec = spec;
  p.status = { phase: 'Pending', qosClass: qosClassOf(spec) };
  return p;
}

/** A resource quantity (`100m`, `1Gi`, `0.5`) as a number, or NaN. */
export function parseQuantity(q: unknown): number {
  if (typeof q === 'number') return q;
  return (typeof q === 'string' ? quantityValue(q) : undefined) ?? NaN;
}

/** Guaranteed, Burstable or BestEffort, from the containers' CPU and memory requests and limits. */
export function qosClassOf(spec: JsonObject): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [
    ...(Array.isArray(spec.containers) ? spec.containers : []),
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
  ].filter(isObject);
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
