// List semantics: resourceVersion / resourceVersionMatch, limit and continue tokens over a sorted
// snapshot. Pure apart from the cache it reads; returns the page, or throws the Status the real
// server would answer with.
import type { KubeObject, Store } from '../store.js';
import type { ListCache, Snapshot } from './listCache.js';
import type { Predicate } from './predicate.js';
import type { ResourceInfo } from './resources.js';
import { badRequest, gone, timeout } from './status.js';

export interface ListPage {
  rv: number;
  items: KubeObject[];
  continue?: string;
  remainingItemCount?: number;
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

const TOKEN_VERSION = 'meta.k8s.io/v1';

/** An opaque token naming the list's version and where the next page starts (after `lastKey`). */
function encodeContinue(rv: number, lastKey: string): string {
  const token: ContinueToken = { v: TOKEN_VERSION, rv, start: `${lastKey}\u0000` };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

export function decodeContinue(text: string): { rv: number; start: string } {
  let token: Partial<ContinueToken>;
  try {
    token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<ContinueToken>;
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data or JSON');
  }
  if (token.v !== TOKEN_VERSION)
    throw badRequest('continue key is not valid: server does not recognize this encoded key');
  if (typeof token.rv !== 'number' || token.rv <= 0 || typeof token.start !== 'string' || token.start === '') {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  return { rv: token.rv, start: token.start };
}

/** First index in sorted `keys` whose key is >= `target`. */
export function lowerBound(keys: readonly string[], target: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';
const EXPIRED_LIST = 'The resourceVersion for the provided list is too old.';

function parseVersion(text: string): number {
  if (!/^\d+$/.test(text)) throw badRequest(`invalid resource version: ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * One page of a list. `resourceVersion=0` is served from the "watch cache": the whole list,
 * ignoring `limit`, as kube-apiserver 1.32 does; otherwise `limit` pages through a snapshot that
 * later `continue` requests reuse.
 */
export function listPage(
  store: Store,
  cache: ListCache,
  info: ResourceInfo,
  predicate: Predicate,
  query: URLSearchParams,
): ListPage {
  const rvParam = query.get('resourceVersion') ?? '';
  const match = query.get('resourceVersionMatch') ?? '';
  const continueParam = query.get('continue') ?? '';
  const limitParam = query.get('limit');
  let limit = limitParam ? Number(limitParam) : 0;
  if (!Number.isInteger(limit) || limit < 0) limit = 0;
  if (match !== '' && match !== 'NotOlderThan' && match !== 'Exact') {
    throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
  }
  if (match !== '' && rvParam === '')
    throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');

  let snapshot: Snapshot;
  let startKey = '';
  if (continueParam) {
    if (rvParam !== '') throw badRequest('specifying resource version is not allowed when using continue');
    const token = decodeContinue(continueParam);
    const kept = cache.recall(info.resource, token.rv);
    if (!kept) throw gone(EXPIRED_CONTINUE);
    snapshot = kept;
    startKey = token.start;
  } else {
    const current = cache.snapshot(info.resource);
    if (rvParam !== '' && rvParam !== '0') {
      const asked = parseVersion(rvParam);
      if (asked > current.rv) throw timeout(`Too large resource version: ${asked}, current: ${current.rv}`);
      if (match === 'Exact' && asked !== current.rv) {
        const kept = cache.recall(info.resource, asked);
        if (!kept) throw gone(EXPIRED_LIST);
        snapshot = kept;
      } else snapshot = current;
    } else snapshot = current;
    if (rvParam === '0' && match !== 'Exact') limit = 0; // the watch cache ignores limit
  }

  // The key range of the namespace (all keys of `ns/…`), or everything.
  let lo = 0;
  let hi = snapshot.keys.length;
  if (predicate.namespace !== undefined) {
    lo = lowerBound(snapshot.keys, `${predicate.namespace}/`);
    hi = lowerBound(snapshot.keys, `${predicate.namespace}0`); // '0' follows '/'
  }
  if (startKey) lo = Math.max(lo, lowerBound(snapshot.keys, startKey));

  const items: KubeObject[] = [];
  let i = lo;
  for (; i < hi; i++) {
    const obj = snapshot.items[i]!;
    if (predicate.empty || predicate.matches(obj)) {
      items.push(obj);
      if (limit > 0 && items.length === limit) {
        i++;
        break;
      }
    }
  }
  const page: ListPage = { rv: snapshot.rv, items };
  if (limit > 0 && items.length === limit && i < hi) {
    page.continue = encodeContinue(snapshot.rv, snapshot.keys[i - 1]!);
    if (predicate.empty) page.remainingItemCount = hi - i;
    cache.keep(info.resource, snapshot);
  }
  return page;
}
