// Pods as kwave holds them: the few fields its decisions read, picked from the wire JSON (watch
// events, lists, the answers to its own writes), nothing else. Pure.
//
// Why not client-node's models: its ObjectSerializer walks every field of every pod against the
// type map (a fifth of kwave's CPU at 10,000 pods), and a whole pod (managedFields, env, volumes,
// last-applied annotations…) costs tens of KB to hold. What is kept is bounded per pod: names,
// labels, kwave's own annotations, owners, node, containers' name/image/pull policy, readiness
// gates, phase, conditions and container statuses. Times stay as the API's RFC 3339 strings
// (podView.toMs reads both those and Dates). Values and parts that repeat across pods are held
// once each (stringPool.ts, partPool.ts: bounded caches; the parts are frozen).
// Nodes and PodDisruptionBudgets (a few per cluster) are kept as the wire JSON, whole: the V1Node
// and V1PodDisruptionBudget shapes, with times as strings.
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { KubeError, kubeErrorFromResponse } from './kubeError.js';
import { podShapeProblem } from './podShape.js';
import { PartPool } from './partPool.js';
import { StringPool } from './stringPool.js';

export { podShapeProblem };

/** Annotations kept: kwave's own (the in-place state); every other annotation is dropped. */
const KEPT_ANNOTATION_PREFIX = 'kwave.dev/';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
/** An API time as its string (a Date, as a library caller may hand over, becomes its ISO string). */
const time = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : undefined;
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

/** Values that repeat across pods (types, reasons, images, nodes, labels, times) are held once (stringPool.ts). */
const repeated = new StringPool();
const rstr = (v: unknown): string | undefined => repeated.share(v);
const rtime = (v: unknown): string | undefined => repeated.share(time(v));

/** Parts that repeat across pods (conditions, containers, tolerations, labels, owners) are held once each (partPool.ts). */
const parts = new PartPool();

/** Each flat item shared, then the list of the shared items. */
function sharedItems(kind: string, items: Json[]): Json[] {
  for (let i = 0; i < items.length; i++) items[i] = parts.shareObject(kind, items[i]!);
  return parts.shareList(kind, items);
}

/**
 * The object without its undefined fields, so a picked object carries no empty keys: the object
 * itself when it has none (most of a pod's parts), else built anew rather than with `delete`,
 * which would turn it into a slow dictionary.
 */
function compact<T extends Json>(o: T): T {
  let complete = true;
  for (const k in o) if (o[k] === undefined) complete = false;
  if (complete) return o;
  const out: Json = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out as T;
}

function stringMap(v: unknown, keep: (key: string) => boolean, share: boolean): Record<string, string> | undefined {
  if (!isObject(v)) return undefined;
  let out: Record<string, string> | undefined;
  for (const [k, val] of Object.entries(v)) {
    if (typeof val === 'string' && keep(k)) (out ??= {})[k] = share ? repeated.share(val)! : val;
  }
  return out;
}

function containerState(v: unknown): Json | undefined {
  if (!isObject(v)) return undefined;
  const out: Json = {};
  if (isObject(v.waiting))
    out.waiting = parts.shareObject(
      'waiting',
      compact({ reason: rstr(v.waiting.reason), message: rstr(v.waiting.message) }),
    );
  if (isObject(v.running))
    out.running = parts.shareObject('running', compact({ startedAt: rtime(v.running.startedAt) }));
  if (isObject(v.terminated)) {
    // Its exit code and reason, for a crash's message; its times and container ID, no decision reads.
    const t = v.terminated;
    out.terminated = parts.shareObject(
      'terminated',
      compact({ exitCode: num(t.exitCode), reason: rstr(t.reason), message: rstr(t.message) }),
    );
  }
  return parts.shareObject('state', out);
}

/** CPU and memory of a `resources` (spec) or status `resources`: what a resize reads; shared. */
function cpuMemoryResources(v: unknown): Json | undefined {
  if (!isObject(v)) return undefined;
  const pick = (list: unknown): Json | undefined => {
    if (!isObject(list)) return undefined;
    const out = compact({ cpu: rstr(list.cpu), memory: rstr(list.memory) });
    return out.cpu === undefined && out.memory === undefined ? undefined : parts.shareObject('quantities', out);
  };
  return parts.shareObject('resources', compact({ requests: pick(v.requests), limits: pick(v.limits) }));
}

/** A container's `resizePolicy` (which resources restart it when resized), shared. */
function resizePolicy(v: unknown): Json[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return sharedItems(
    'resizePolicy',
    list(v).map((p) => compact({ resourceName: rstr(p.resourceName), restartPolicy: rstr(p.restartPolicy) })),
  );
}

/** A spec container: name, image, pull policy, CPU and memory, resize policy. */
function specContainer(c: Json): Json {
  return compact({
    name: rstr(c.name),
    image: rstr(c.image),
    imagePullPolicy: rstr(c.imagePullPolicy),
    resources: cpuMemoryResources(c.resources),
    resizePolicy: resizePolicy(c.resizePolicy),
  });
}

function containerStatus(c: Json): Json {
  return compact({
    name: rstr(c.name),
    image: rstr(c.image),
    imageID: rstr(c.imageID),
    containerID: str(c.containerID),
    ready: bool(c.ready),
    started: bool(c.started),
    restartCount: num(c.restartCount),
    resources: cpuMemoryResources(c.resources),
    // Not lastState: no decision reads the container before the last one (it held a third
    // container ID a pod once upgraded, ~100 bytes).
    state: containerState(c.state),
  });
}

/** A pod's conditions, shared. */
const podConditions = (raw: unknown): Json[] =>
  sharedItems(
    'condition',
    list(raw).map((c) =>
      compact({
        type: rstr(c.type),
        status: rstr(c.status),
        reason: rstr(c.reason),
        message: rstr(c.message),
        lastTransitionTime: rtime(c.lastTransitionTime),
      }),
    ),
  );

/** The spec's parts kwave reads, each shared, and so the whole (the pods of one template on one node). */
function podSpec(spec: Json): Json {
  return parts.shareObject(
    'spec',
    compact({
      nodeName: rstr(spec.nodeName),
      containers: sharedItems('container', list(spec.containers).map(specContainer)),
      readinessGates: Array.isArray(spec.readinessGates)
        ? sharedItems(
            'gate',
            list(spec.readinessGates).map((g) => compact({ conditionType: rstr(g.conditionType) })),
          )
        : undefined,
      // Pre-pull copies them onto its puller pods.
      tolerations: Array.isArray(spec.tolerations)
        ? sharedItems(
            'toleration',
            list(spec.tolerations).map((t) =>
              compact({
                key: rstr(t.key),
                operator: rstr(t.operator),
                value: rstr(t.value),
                effect: rstr(t.effect),
                tolerationSeconds: num(t.tolerationSeconds),
              }),
            ),
          )
        : undefined,
      imagePullSecrets: Array.isArray(spec.imagePullSecrets)
        ? sharedItems(
            'pullSecret',
            list(spec.imagePullSecrets).map((s) => compact({ name: rstr(s.name) })),
          )
        : undefined,
    }),
  );
}

/** A pod's labels, shared (the pods of one template carry the same). */
function sharedLabels(labels: Record<string, string> | undefined): Record<string, string> | undefined {
  return labels && parts.shareObject('labels', labels);
}

/** A pod's members as objects ({} where absent or not an object) and its owners, picked: what both decoders start from. */
function podParts(raw: unknown): { pod: Json; md: Json; spec: Json; status: Json; owners: Json[] } {
  const pod = isObject(raw) ? raw : {};
  const md = isObject(pod.metadata) ? pod.metadata : {};
  const spec = isObject(pod.spec) ? pod.spec : {};
  const status = isObject(pod.status) ? pod.status : {};
  const owners = sharedItems(
    'owner',
    list(md.ownerReferences).map((o) =>
      compact({
        apiVersion: rstr(o.apiVersion),
        kind: rstr(o.kind),
        name: rstr(o.name),
        uid: rstr(o.uid),
        controller: bool(o.controller),
      }),
    ),
  );
  return { pod, md, spec, status, owners };
}

/** A pod (wire JSON, or a client-node model object) → the small V1Pod-shaped view kwave keeps. */
export function decodePod(raw: unknown): V1Pod {
  const { pod, md, spec, status, owners } = podParts(raw);
  const view = {
    apiVersion: rstr(pod.apiVersion),
    kind: rstr(pod.kind),
    metadata: compact({
      name: str(md.name),
      namespace: rstr(md.namespace),
      uid: str(md.uid),
      resourceVersion: str(md.resourceVersion),
      generation: num(md.generation),
      deletionTimestamp: time(md.deletionTimestamp),
      labels: sharedLabels(stringMap(md.labels, () => true, true)),
      annotations: stringMap(md.annotations, (k) => k.startsWith(KEPT_ANNOTATION_PREFIX), false),
      ownerReferences: owners.length ? owners : undefined,
    }),
    spec: podSpec(spec),
    status: compact({
      phase: rstr(status.phase),
      observedGeneration: num(status.observedGeneration),
      conditions: Array.isArray(status.conditions) ? podConditions(status.conditions) : undefined,
      containerStatuses: Array.isArray(status.containerStatuses)
        ? list(status.containerStatuses).map(containerStatus)
        : undefined,
    }),
  };
  // The view has V1Pod's field names and shapes; only its times are strings where V1Pod declares
  // Date (readers go through podView.toMs, which takes both).
  return compact(view) as unknown as V1Pod;
}

/** A node as JSON (a list's item, a watch's object): the V1Node shape already, times as strings. */
export function decodeNode(raw: unknown): V1Node {
  return raw as V1Node;
}

/** A PodDisruptionBudget as JSON: the V1PodDisruptionBudget shape; refused (500 BadResponse) without a name. */
export function decodePdb(raw: unknown): V1PodDisruptionBudget {
  const name = (raw as { metadata?: { name?: unknown } } | null | undefined)?.metadata?.name;
  if (typeof name !== 'string' || name === '')
    throw new KubeError(500, 'BadResponse', 'not a PodDisruptionBudget: no metadata.name');
  return raw as V1PodDisruptionBudget;
}

/** A pod off the wire, refused with a KubeError (500 BadResponse) when it cannot be a pod. */
export function checkedPod(raw: unknown): V1Pod {
  const problem = podShapeProblem(raw);
  if (problem) throw new KubeError(500, 'BadResponse', `not a pod: ${problem}`);
  return decodePod(raw);
}

export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; resourceVersion: string }
  | { type: 'ERROR'; error: KubeError };

/**
 * One line of a watch stream → the event kwave acts on; undefined for types it ignores (as
 * client-go does). An object `decode` refuses becomes an ERROR that ends the stream, as
 * client-go's decoder does; the watcher then watches again from the last version.
 */
export function watchEvent<T>(type: unknown, object: unknown, decode: (raw: unknown) => T): WatchEvent<T> | undefined {
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      try {
        return { type, object: decode(object) };
      } catch (err) {
        if (!(err instanceof KubeError)) throw err;
        return { type: 'ERROR', error: new KubeError(500, 'BadWatchEvent', `a ${type} event: ${err.message}`) };
      }
    }
    case 'BOOKMARK': {
      const rv = (object as { metadata?: { resourceVersion?: unknown } } | null | undefined)?.metadata?.resourceVersion;
      return typeof rv === 'string' ? { type, resourceVersion: rv } : undefined;
    }
    case 'ERROR': {
      const code = (object as { code?: unknown } | null | undefined)?.code;
      return { type, error: kubeErrorFromResponse(typeof code === 'number' ? code : 500, object) };
    }
    default:
      return undefined;
  }
}

/**
 * A pod off the wire → the part of decodePod's view that a selection reads and a dry run keeps:
 * names, uid, labels, kwave's annotations, owners, deletion, node, containers' name and image,
 * readiness gates, conditions, and of container statuses name, image, imageID and whether it is
 * running. Every field it has holds what decodePod's view holds there. For `kwave plan`, which
 * lists every selected pod and drops the view once the pod is classified: at 50,000 pods
 * decodePod's whole view was a fifth of the list's CPU. Values a dry run keeps (namespace, node,
 * labels, owners, conditions) are pooled as decodePod pools them; the others die with their page.
 */
export function decodePodBrief(raw: unknown): V1Pod {
  const { md, spec, status, owners } = podParts(raw);
  const metadata: Json = {};
  if (typeof md.name === 'string') metadata.name = md.name;
  const namespace = rstr(md.namespace);
  if (namespace !== undefined) metadata.namespace = namespace;
  if (typeof md.uid === 'string') metadata.uid = md.uid;
  const deletion = time(md.deletionTimestamp);
  if (deletion !== undefined) metadata.deletionTimestamp = deletion;
  const labels = sharedLabels(stringMap(md.labels, () => true, true));
  if (labels) metadata.labels = labels;
  const annotations = stringMap(md.annotations, (k) => k.startsWith(KEPT_ANNOTATION_PREFIX), false);
  if (annotations) metadata.annotations = annotations;
  if (owners.length) metadata.ownerReferences = owners;
  const view: Json = { metadata };
  const podSpec: Json = {};
  const nodeName = rstr(spec.nodeName);
  if (nodeName !== undefined) podSpec.nodeName = nodeName;
  podSpec.containers = list(spec.containers).map((c) => {
    const out: Json = {};
    if (typeof c.name === 'string') out.name = c.name;
    if (typeof c.image === 'string') out.image = c.image;
    // What a resize plan's dry run shows and checks (current resources, restarts, QoS).
    const resources = cpuMemoryResources(c.resources);
    if (resources !== undefined) out.resources = resources;
    const policy = resizePolicy(c.resizePolicy);
    if (policy !== undefined) out.resizePolicy = policy;
    return out;
  });
  if (Array.isArray(spec.readinessGates))
    podSpec.readinessGates = list(spec.readinessGates).map((g) =>
      typeof g.conditionType === 'string' ? { conditionType: g.conditionType } : {},
    );
  view.spec = podSpec;
  const podStatus: Json = {};
  if (Array.isArray(status.conditions)) podStatus.conditions = podConditions(status.conditions);
  if (Array.isArray(status.containerStatuses)) {
    podStatus.containerStatuses = list(status.containerStatuses).map((c) => {
      const out: Json = {};
      if (typeof c.name === 'string') out.name = c.name;
      if (typeof c.image === 'string') out.image = c.image;
      if (typeof c.imageID === 'string') out.imageID = c.imageID;
      const resources = cpuMemoryResources(c.resources);
      if (resources !== undefined) out.resources = resources;
      if (isObject(c.state))
        out.state = isObject(c.state.running)
          ? { running: compact({ startedAt: rtime(c.state.running.startedAt) }) }
          : {};
      return out;
    });
  }
  view.status = podStatus;
  return view as unknown as V1Pod;
}
