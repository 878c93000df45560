// The write verbs against the store, with kube-apiserver's rules: optimistic concurrency on
// resourceVersion, no-op updates that write nothing, graceful pod deletion, finalizers, and
// validation that answers 422. Each call returns the object (or Status) to send, or throws an
// ApiError.
import { randomBytes } from 'node:crypto';
import { StoreError, type KubeObject, type Store } from '../store.js';
import { checkedBody, checkName, checkNamespaceOpen } from './bodyChecks.js';
import { decodeBody, decodePatched } from './bodyDecoding.js';
import { clone, deepEqual, getPath, isObject, type JsonObject } from './json.js';
import { applyPatch, type PatchType } from './patch/index.js';
import { RESOURCES, apiVersionOf, type ResourceInfo } from './resources.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  notFound,
  success,
  unknownInternal,
  type Status,
} from './status.js';
import { prepareCreate, prepareUpdate, validateCreate, validateUpdate } from './strategy.js';
import { rfc3339 } from '../clock.js';

export interface WriteOptions {
  /** `dryRun=All`: everything but the write. */
  dryRun: boolean;
}

export interface DeleteOptions extends WriteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** 5 characters from the alphabet Kubernetes uses for generated names (no vowels, no look-alikes). */
function nameSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join('');
}

function withoutVersion(obj: JsonObject): JsonObject {
  const meta = { ...(obj.metadata as JsonObject) };
  delete meta.resourceVersion;
  return { ...obj, metadata: meta };
}

export class ObjectOps {
  /** Timers of namespaces being emptied after a delete. */
  private readonly pending = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
  ) {}

  get(info: ResourceInfo, namespace: string | undefined, name: string): KubeObject {
    const obj = this.store.get(info.resource, namespace, name);
    if (!obj) throw notFound(info, name);
    return obj;
  }

  create(info: ResourceInfo, namespace: string | undefined, body: unknown, opts: WriteOptions): KubeObject {
    const obj = decodeBody(info, checkedBody(info, namespace, body));
    const meta = obj.metadata as JsonObject;
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
      throw unknownInternal('resourceVersion should not be set on objects to be created');
    }
    delete meta.resourceVersion;
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName)
      meta.name = `${meta.generateName}${nameSuffix()}`;
    if (info.namespaced) checkNamespaceOpen(this.store, info, namespace!, String(meta.name ?? ''));
    const prepared = prepareCreate(info, obj);
    const errors = validateCreate(info, prepared);
    if (errors.length) throw invalid(info.kind, info.group, String(meta.name ?? meta.generateName ?? ''), errors);
    if (opts.dryRun) {
      if (this.store.get(info.resource, namespace, String(meta.name))) throw alreadyExists(info, String(meta.name));
      return prepared as KubeObject;
    }
    try {
      return this.store.create(info.resource, prepared as KubeObject);
    } catch (err) {
      if (err instanceof StoreError && err.reason === 'AlreadyExists') throw alreadyExists(info, String(meta.name));
      throw err;
    }
  }

  /** PUT: a full replacement, conditional on metadata.resourceVersion when the body carries one. */
  update(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    subresource: string | undefined,
    body: unknown,
    opts: WriteOptions,
  ): KubeObject {
    const obj = decodeBody(info, checkedBody(info, namespace, body));
    checkName(obj, name);
    const current = this.store.get(info.resource, namespace, name);
    if (!current) {
      if (!info.createOnUpdate || subresource) throw notFound(info, name);
      delete (obj.metadata as JsonObject).resourceVersion;
      return this.create(info, namespace, obj, opts);
    }
    // A replacement carrying a uid is conditional on it (the storage layer's UID precondition).
    const uid = (obj.metadata as JsonObject).uid;
    if (typeof uid === 'string' && uid !== '' && uid !== current.metadata.uid) {
      throw conflict(
        info,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
      );
    }
    const rv = (obj.metadata as JsonObject).resourceVersion;
    if ((rv === undefined || rv === '') && info.requireVersionOnUpdate) {
      throw invalid(info.plural, info.group, name, [
        {
          type: 'Invalid',
          field: 'metadata.resourceVersion',
          rawValue: '0x0',
          detail: 'must be specified for an update',
        },
      ]);
    }
    return this.commit(info, subresource, current, obj, opts);
  }

  patch(
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    subresource: string | undefined,
    type: PatchType,
    bodyText: string,
    opts: WriteOptions,
  ): KubeObject {
    const current = this.get(info, namespace, name);
    const patched = decodePatched(info, type, applyPatch(type, current as unknown as JsonObject, bodyText), bodyText);
    if (!isObject(patched.metadata)) throw badRequest('metadata: the patched object has no metadata');
    checkName(patched, name);
    if (info.namespaced && patched.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return this.commit(info, subresource, current, patched, opts);
  }

  delete(info: ResourceInfo, namespace: string | undefined, name: string, opts: DeleteOptions): KubeObject | Status {
    const current = this.get(info, namespace, name);
    const { uid, resourceVersion } = opts.preconditions ?? {};
    if (uid !== undefined && uid !== current.metadata.uid) {
      throw conflict(
        info,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
      );
    }
    if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        info,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
      );
    }
    if (info.resource === 'pods') return this.deletePod(info, current, opts);
    if (info.resource === 'namespaces') return this.deleteNamespace(info, current, opts);
    if ((current.metadata.finalizers ?? []).length > 0) {
      if (current.metadata.deletionTimestamp) return current;
      return this.write(
        info,
        {
          ...clone(current),
          metadata: {
            ...clone(current.metadata),
            deletionTimestamp: rfc3339(this.now()),
            deletionGracePeriodSeconds: 0,
          },
        },
        opts,
      );
    }
    if (opts.dryRun) return success(info, name, current.metadata.uid);
    this.store.remove(info.resource, namespace, name);
    return success(info, name, current.metadata.uid);
  }

  /** Stops pending namespace clean-ups (the server is closing). */
  close(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }

  // --- internals -------------------------------------------------------------------------

  /** The update shared by PUT and PATCH, from `current` to the client's `candidate`. */
  private commit(
    info: ResourceInfo,
    subresource: string | undefined,
    current: KubeObject,
    candidate: JsonObject,
    opts: WriteOptions,
  ): KubeObject {
    const name = current.metadata.name;
    const asked = (candidate.metadata as JsonObject).resourceVersion;
    if (asked !== undefined && asked !== null && asked !== '' && asked !== current.metadata.resourceVersion)
      throw conflict(info, name);
    const old = current as unknown as JsonObject;
    // An empty uid is filled in from the stored object; a different one is refused, never restored.
    const uid = (candidate.metadata as JsonObject).uid;
    if (typeof uid === 'string' && uid !== '' && uid !== current.metadata.uid) {
      throw invalid(info.kind, info.group, name, [
        { type: 'Invalid', field: 'metadata.uid', value: uid, detail: 'field is immutable' },
      ]);
    }
    const next = prepareUpdate(info, subresource, old, candidate);
    (next.metadata as JsonObject).resourceVersion = current.metadata.resourceVersion!;
    next.kind = info.kind;
    next.apiVersion = apiVersionOf(info);
    const errors = validateUpdate(info, subresource, old, next);
    if (errors.length) throw invalid(info.kind, info.group, name, errors);
    // Nothing changed: nothing is written, the version stays, no watch event.
    if (deepEqual(withoutVersion(next), withoutVersion(old))) return current;
    const written = this.write(info, next as KubeObject, opts);
    return this.finishIfReleased(info, written, opts) ?? written;
  }

  private write(info: ResourceInfo, obj: KubeObject, opts: WriteOptions): KubeObject {
    if (opts.dryRun) return obj;
    try {
      return this.store.update(info.resource, obj, obj.metadata.resourceVersion);
    } catch (err) {
      if (err instanceof StoreError)
        throw err.reason === 'NotFound' ? notFound(info, obj.metadata.name) : conflict(info, obj.metadata.name);
      throw err;
    }
  }

  /** An object being deleted goes away once its finalizers are gone and its grace has run out. */
  private finishIfReleased(info: ResourceInfo, obj: KubeObject, opts: WriteOptions): KubeObject | undefined {
    const m = obj.metadata;
    if (
      !m.deletionTimestamp ||
      (m.finalizers ?? []).length > 0 ||
      (m.deletionGracePeriodSeconds ?? 0) > 0 ||
      opts.dryRun
    )
      return undefined;
    if (info.resource === 'namespaces') return undefined; // the namespace clean-up removes it
    return this.store.remove(info.resource, m.namespace, m.name);
  }

  /**
   * Graceful deletion: the pod gets deletionTimestamp = now + grace and stays until its kubelet
   * has stopped it (and deletes it with grace 0). Grace is 0 for a pod on no node or in a terminal
   * phase; a later delete may only shorten it.
   */
  private deletePod(info: ResourceInfo, pod: KubeObject, opts: DeleteOptions): KubeObject {
    const phase = getPath(pod, ['status', 'phase']);
    let grace =
      opts.gracePeriodSeconds ?? (getPath(pod, ['spec', 'terminationGracePeriodSeconds']) as number | undefined) ?? 30;
    if (grace < 0) grace = 1;
    if (!getPath(pod, ['spec', 'nodeName']) || phase === 'Succeeded' || phase === 'Failed') grace = 0;
    const m = pod.metadata;
    const now = this.now();
    let deletionTimestamp: string;
    if (m.deletionTimestamp) {
      const previous = m.deletionGracePeriodSeconds ?? 0;
      if (previous > 0) {
        if (opts.gracePeriodSeconds === undefined || grace >= previous) return pod; // pending already
        deletionTimestamp = rfc3339(new Date(Date.parse(m.deletionTimestamp) - (previous - grace) * 1000));
      } else {
        deletionTimestamp = m.deletionTimestamp;
        grace = 0;
      }
    } else deletionTimestamp = rfc3339(new Date(now.getTime() + grace * 1000));
    const marked = this.write(
      info,
      { ...clone(pod), metadata: { ...clone(m), deletionTimestamp, deletionGracePeriodSeconds: grace } },
      opts,
    );
    if (grace > 0 || (m.finalizers ?? []).length > 0 || opts.dryRun) return marked;
    return this.store.remove(info.resource, m.namespace, m.name);
  }

  /** A namespace turns Terminating; its objects and then itself are removed right after. */
  private deleteNamespace(info: ResourceInfo, ns: KubeObject, opts: DeleteOptions): KubeObject {
    if (ns.metadata.deletionTimestamp) return ns;
    const marked = this.write(
      info,
      {
        ...clone(ns),
        metadata: { ...clone(ns.metadata), deletionTimestamp: rfc3339(this.now()), deletionGracePeriodSeconds: 0 },
        status: { phase: 'Terminating' },
      },
      opts,
    );
    if (opts.dryRun) return marked;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      for (const r of Object.values(RESOURCES)) {
        if (!r.namespaced) continue;
        for (const o of this.store.list(r.resource, ns.metadata.name))
          this.store.remove(r.resource, o.metadata.namespace, o.metadata.name);
      }
      if (this.store.get('namespaces', undefined, ns.metadata.name))
        this.store.remove('namespaces', undefined, ns.metadata.name);
    }, 50);
    this.pending.add(timer);
    return marked;
  }
}
