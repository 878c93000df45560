// The request pipeline of the simulated kube-apiserver: authentication, routing, discovery, the
// request counters, fault injection, and the dispatch of each verb to lists, watches and writes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { Faults } from '../faults.js';
import type { SimStats } from '../stats.js';
import type { KubeObject, Store } from '../store.js';
import { isAuthorized } from './auth.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, SERVER_VERSION } from './discovery.js';
import { injectedDelay, injectedError } from './faultInjection.js';
import { readBody, sendJson, sendStatus, sendText, streamJsonList } from './http.js';
import { frozenJson, isObject } from './json.js';
import { listPage } from './list.js';
import type { ListCache } from './listCache.js';
import { negotiate, type Representation } from './negotiate.js';
import type { DeleteOptions, ObjectOps } from './objects.js';
import { openApiDocument, openApiIndex } from './openapi.js';
import { patchTypeOf } from './patch/index.js';
import { buildPredicate } from './predicate.js';
import { apiVersionOf, type ResourceInfo } from './resources.js';
import { route, type Route } from './routing.js';
import {
  anonymousForbidden,
  ApiError,
  badRequest,
  internalError,
  methodNotAllowed,
  pathNotFound,
  unauthorized,
  unsupportedMediaType,
} from './status.js';
import { toTable, type IncludeObject } from './table/index.js';
import { serveWatch } from './watch.js';
import { SELF_SUBJECT_REVIEWS_PATH, serveSelfSubjectReview } from './selfSubjectReview.js';
import type { Admission } from './admission.js';

export interface HandlerDeps {
  store: Store;
  stats: SimStats;
  faults: Faults;
  admission: Admission;
  token: string;
  now: () => Date;
  cache: ListCache;
  ops: ObjectOps;
  /** host:port, for /api's serverAddressByClientCIDRs. */
  serverAddress: () => string;
  bookmarkIntervalMs: number;
  random?: () => number;
}

type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';
type ResourceRoute = Extract<Route, { kind: 'resource' }>;

const truthy = (v: string | null) => v === 'true' || v === '1';

function verbOf(method: string, r: ResourceRoute, query: URLSearchParams): Verb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (r.watchPrefix || truthy(query.get('watch'))) return 'watch';
      return r.name === undefined ? 'list' : 'get';
    case 'POST':
      return r.name === undefined && r.subresource === undefined ? 'create' : undefined;
    case 'PUT':
      return r.name !== undefined ? 'update' : undefined;
    case 'PATCH':
      return r.name !== undefined ? 'patch' : undefined;
    case 'DELETE':
      if (r.subresource !== undefined) return undefined;
      return r.name === undefined ? 'deletecollection' : 'delete';
    default:
      return undefined;
  }
}

function includeObjectOf(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  if (v === 'None' || v === 'Object') return v;
  return 'Metadata';
}

function dryRunOf(query: URLSearchParams, body?: unknown): boolean {
  const values = [
    ...query.getAll('dryRun'),
    ...(isObject(body) && Array.isArray(body.dryRun) ? body.dryRun.map(String) : []),
  ];
  for (const v of values)
    if (v !== 'All') throw badRequest(`dryRun: Unsupported value: "${v}": supported values: "All"`);
  return values.length > 0;
}

/** Parses a create/update body: JSON, or YAML when sent as such. */
function parseObjectBody(contentType: string | undefined, text: string): unknown {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  try {
    if (media === 'application/json') return JSON.parse(text);
    if (media === 'application/yaml') return parseYaml(text);
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
  throw unsupportedMediaType(media, ['application/json', 'application/yaml']);
}

export function makeHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(req, res, deps).catch((err: unknown) => {
      const apiErr = err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err));
      if (res.headersSent) res.destroy();
      else sendStatus(res, apiErr.status, apiErr.headers);
    });
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: HandlerDeps): Promise<void> {
  const url = new URL(req.url ?? '/', 'https://sim.invalid');
  const r = route(url.pathname);
  const method = req.method ?? 'GET';
  if (req.headers.authorization === undefined) refuseAnonymous(r, method, url);
  else if (!isAuthorized(req.headers.authorization, deps.token)) throw unauthorized();
  if (url.pathname === SELF_SUBJECT_REVIEWS_PATH && method === 'POST') {
    deps.stats.countRequest('create', 'selfsubjectreviews');
    return serveSelfSubjectReview(req, res);
  }
  if (r.kind !== 'resource') {
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
    return serveNonResource(res, r, deps);
  }
  const query = url.searchParams;
  const verb = verbOf(method, r, query);
  if (!verb) throw methodNotAllowed();
  const resource = r.subresource ? `${r.info.plural}/${r.subresource}` : r.info.plural;
  deps.stats.countRequest(verb, resource);
  try {
    await serveResource(req, res, deps, { route: r, verb, resource, query });
  } catch (err) {
    deps.stats.countRefused(verb, resource);
    throw err;
  }
}

interface ResourceRequest {
  route: ResourceRoute;
  verb: Verb;
  /** "pods/status": the resource as /sim/stats keys it. */
  resource: string;
  query: URLSearchParams;
}

async function serveResource(
  req: IncomingMessage,
  res: ServerResponse,
  deps: HandlerDeps,
  { route: r, verb, resource, query }: ResourceRequest,
): Promise<void> {
  const delay = injectedDelay(deps.faults);
  if (delay) await delay;
  const fault = injectedError(deps.faults, deps.random);
  if (fault) throw fault;

  const info = r.info;
  const namespace = info.namespaced ? r.namespace : undefined;
  const now = deps.now;
  deps.admission.admit(verb, resource, info.kind, r.name);
  const answered = () => deps.admission.afterWrite(verb, resource, r.name);
  switch (verb) {
    case 'get': {
      const representation = negotiate(req.headers.accept);
      const obj = deps.ops.get(info, namespace, r.name!);
      return sendObject(res, 200, info, obj, representation, includeObjectOf(query), now());
    }
    case 'list': {
      const representation = negotiate(req.headers.accept);
      const predicate = buildPredicate(info, namespace, query);
      const page = listPage(deps.store, deps.cache, info, predicate, query);
      return sendList(res, info, page, representation, includeObjectOf(query), now());
    }
    case 'watch': {
      const representation = negotiate(req.headers.accept);
      if (r.name !== undefined) {
        const byName = `metadata.name=${r.name}`;
        const fs = query.get('fieldSelector');
        query.set('fieldSelector', fs ? `${fs},${byName}` : byName);
      }
      const predicate = buildPredicate(info, namespace, query);
      return serveWatch(res, { info, predicate, representation, include: includeObjectOf(query), query }, deps);
    }
    case 'create': {
      const body = parseObjectBody(req.headers['content-type'], await readBody(req));
      const created = deps.ops.create(info, namespace, body, { dryRun: dryRunOf(query) });
      await answered();
      return sendObject(res, 201, info, created, { as: 'object' }, 'Object', now());
    }
    case 'update': {
      const body = parseObjectBody(req.headers['content-type'], await readBody(req));
      const existed = deps.store.get(info.resource, namespace, r.name!) !== undefined;
      const updated = deps.ops.update(info, namespace, r.name!, r.subresource, body, { dryRun: dryRunOf(query) });
      await answered();
      return sendObject(res, existed ? 200 : 201, info, updated, { as: 'object' }, 'Object', now());
    }
    case 'patch': {
      const type = patchTypeOf(req.headers['content-type']);
      const text = await readBody(req);
      const patched = deps.ops.patch(info, namespace, r.name!, r.subresource, type, text, { dryRun: dryRunOf(query) });
      await answered();
      return sendObject(res, 200, info, patched, { as: 'object' }, 'Object', now());
    }
    case 'delete': {
      const options = await deleteOptionsOf(req, query);
      const result = deps.ops.delete(info, namespace, r.name!, options);
      return sendJson(res, 200, result);
    }
    case 'deletecollection': {
      const options = await deleteOptionsOf(req, query);
      const predicate = buildPredicate(info, namespace, query);
      const victims = deps.cache.snapshot(info.resource).items.filter((o) => predicate.matches(o));
      const items: unknown[] = [];
      for (const v of victims) {
        const out = deps.ops.delete(info, v.metadata.namespace, v.metadata.name, {
          ...options,
          preconditions: undefined,
        });
        if (isObject(out) && out.kind !== 'Status') items.push(out);
      }
      return sendJson(res, 200, {
        kind: info.listKind,
        apiVersion: apiVersionOf(info),
        metadata: { resourceVersion: String(deps.store.resourceVersion) },
        items,
      });
    }
  }
}

async function deleteOptionsOf(req: IncomingMessage, query: URLSearchParams): Promise<DeleteOptions> {
  const text = await readBody(req);
  let body: unknown = {};
  if (text.trim() !== '') {
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw badRequest(`the DeleteOptions body could not be decoded: ${(err as Error).message}`);
    }
  }
  const b = isObject(body) ? body : {};
  const graceText = query.get('gracePeriodSeconds');
  let gracePeriodSeconds: number | undefined;
  if (graceText !== null && graceText !== '') gracePeriodSeconds = Number(graceText);
  else if (typeof b.gracePeriodSeconds === 'number') gracePeriodSeconds = b.gracePeriodSeconds;
  if (gracePeriodSeconds !== undefined && !Number.isInteger(gracePeriodSeconds))
    throw badRequest('gracePeriodSeconds must be an integer');
  const pre = isObject(b.preconditions) ? b.preconditions : {};
  const preconditions = {
    ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
    ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
  };
  return {
    dryRun: dryRunOf(query, b),
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    preconditions,
  };
}

function sendObject(
  res: ServerResponse,
  code: number,
  info: ResourceInfo,
  obj: KubeObject,
  representation: Representation,
  include: IncludeObject,
  now: Date,
): void {
  if (representation.as === 'table') {
    return sendJson(
      res,
      code,
      toTable(
        info.resource,
        [obj],
        { resourceVersion: obj.metadata.resourceVersion },
        { apiVersion: representation.apiVersion, include, withColumns: true, now },
      ),
    );
  }
  if (representation.as === 'metadata') {
    return sendJson(res, code, {
      kind: 'PartialObjectMetadata',
      apiVersion: representation.apiVersion,
      metadata: obj.metadata,
    });
  }
  sendText(res, code, frozenJson(obj));
}

function sendList(
  res: ServerResponse,
  info: ResourceInfo,
  page: { rv: number; items: KubeObject[]; continue?: string; remainingItemCount?: number },
  representation: Representation,
  include: IncludeObject,
  now: Date,
): Promise<void> | void {
  const meta = {
    resourceVersion: String(page.rv),
    ...(page.continue ? { continue: page.continue } : {}),
    ...(page.remainingItemCount !== undefined ? { remainingItemCount: page.remainingItemCount } : {}),
  };
  if (representation.as === 'table') {
    return sendJson(
      res,
      200,
      toTable(info.resource, page.items, meta, {
        apiVersion: representation.apiVersion,
        include,
        withColumns: true,
        now,
      }),
    );
  }
  if (representation.as === 'metadata') {
    const items = page.items.map((o) => ({
      kind: 'PartialObjectMetadata',
      apiVersion: representation.apiVersion,
      metadata: o.metadata,
    }));
    return sendJson(res, 200, {
      kind: 'PartialObjectMetadataList',
      apiVersion: representation.apiVersion,
      metadata: meta,
      items,
    });
  }
  const head = `{"kind":"${info.listKind}","apiVersion":"${apiVersionOf(info)}","metadata":${JSON.stringify(meta)},"items":[`;
  return streamJsonList(
    res,
    head,
    (function* () {
      for (const o of page.items) yield frozenJson(o, 'list');
    })(),
    ']}',
  );
}

function serveNonResource(res: ServerResponse, r: Exclude<Route, { kind: 'resource' }>, deps: HandlerDeps): void {
  switch (r.kind) {
    case 'version':
      return sendJson(res, 200, SERVER_VERSION);
    case 'health':
      return void sendText(res, 200, 'ok', { 'Content-Type': 'text/plain; charset=utf-8' });
    case 'apiVersions':
      return sendJson(res, 200, apiVersions(deps.serverAddress()));
    case 'apiGroupList':
      return sendJson(res, 200, apiGroupList());
    case 'apiGroup':
      return sendJson(res, 200, apiGroup(r.group));
    case 'resourceList':
      return sendJson(res, 200, apiResourceList(r.group, r.version));
    case 'openapi': {
      const doc = r.path === '' ? openApiIndex() : openApiDocument(r.path);
      if (!doc) throw pathNotFound();
      return sendJson(res, 200, doc);
    }
    case 'notFound':
      throw pathNotFound();
  }
}

/** No credentials: only the version and health checks are open to system:anonymous (system:public-info-viewer). */
function refuseAnonymous(r: ReturnType<typeof route>, method: string, url: URL): void {
  if (r.kind === 'version' || r.kind === 'health') return;
  if (r.kind !== 'resource') throw anonymousForbidden(method.toLowerCase(), `path "${url.pathname}"`);
  const verb = verbOf(method, r, url.searchParams) ?? method.toLowerCase();
  const resource = r.subresource ? `${r.info.plural}/${r.subresource}` : r.info.plural;
  const scope = r.info.namespaced && r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  throw anonymousForbidden(verb, `resource "${resource}" in API group "${r.info.group}" ${scope}`, r.info.plural);
}
