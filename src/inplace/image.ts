// Comparing image references and image IDs as the kubelet reports them. Not a validator (the plan
// loader validates what users write); lenient, because status fields come in several spellings:
// spec `nginx:1.25.3`, status.image `docker.io/library/nginx:1.25.3`, status.imageID
// `docker.io/library/nginx@sha256:…`, `docker-pullable://nginx@sha256:…` or a bare `sha256:…`.

export interface NormalizedImage {
  /** Fully qualified repository, e.g. `docker.io/library/nginx`; empty for a bare digest. */
  repository: string;
  /** Absent when the reference carries only a digest. */
  tag?: string;
  digest?: string;
}

// The grammar (and which first component is a registry) is plan/imageRef.ts's, shared.
import { splitImageReference } from '../plan/imageRef.js';
import { textMemo } from './textMemo.js';

const SCHEME = /^[a-z-]+:\/\//;
const BARE_DIGEST = /^sha(?:256|384|512):[a-f0-9]+$/;
const DIGEST_IN_TEXT = /sha(?:256|384|512):[a-f0-9]{32,}/g;
const DEFAULT_DOMAIN = 'docker.io';

// Every watch event of every pod compares its images (spec, status) with the plan's: the same few
// strings each time, so each is cut once. Bounded: a run meets a handful of distinct references,
// and a cache that fills up (image IDs of many builds) starts over.
const MAX_NORMALIZED = 1024;

/** `nginx:1.25` → `{repository: 'docker.io/library/nginx', tag: '1.25'}`; no tag or digest → `latest`. The result is shared: do not change it. */
export const normalizeImage: (ref: string) => Readonly<NormalizedImage> = textMemo(
  (ref) => Object.freeze(cutImage(ref)),
  MAX_NORMALIZED,
);

function cutImage(ref: string): NormalizedImage {
  const rest = ref.trim().replace(SCHEME, '');
  if (BARE_DIGEST.test(rest)) return { repository: '', digest: rest };
  const split = splitImageReference(rest);
  const { path: parts, digest } = split;
  let tag = split.tag;
  let domain = split.domain ?? DEFAULT_DOMAIN;
  if (domain === 'index.docker.io') domain = DEFAULT_DOMAIN;
  if (domain === DEFAULT_DOMAIN && parts.length === 1) parts.unshift('library');
  const out: NormalizedImage = { repository: `${domain}/${parts.join('/')}` };
  if (tag === undefined && digest === undefined) tag = 'latest';
  if (tag !== undefined) out.tag = tag;
  if (digest !== undefined) out.digest = digest;
  return out;
}

/**
 * Whether two references name the same image: same repository, and the same digest when both
 * carry one, else the same tag. A bare digest matches any reference with that digest.
 * `nginx:1.25.3` ≡ `docker.io/library/nginx:1.25.3`; `nginx:1.25` ≢ `nginx:1.25.3`.
 */
export function sameImage(a: string, b: string): boolean {
  const x = normalizeImage(a);
  const y = normalizeImage(b);
  if ((x.repository === '' || y.repository === '') && x.digest && y.digest) return x.digest === y.digest;
  if (x.repository !== y.repository) return false;
  if (x.digest && y.digest) return x.digest === y.digest;
  return x.tag !== undefined && x.tag === y.tag;
}

/** The digest in an image reference or image ID (`…@sha256:abc…` → `sha256:abc…`), if any. */
export const digestOf: (text: string) => string | undefined = textMemo((text) => {
  const all = text.match(DIGEST_IN_TEXT);
  return all ? all[all.length - 1] : undefined;
}, MAX_NORMALIZED);

/**
 * Whether two image IDs name the same image content: by digest when both carry one (runtimes
 * spell the repository part differently), else as strings. An empty ID (no container yet) equals
 * only another empty ID.
 */
export function sameImageID(a: string, b: string): boolean {
  if (a === '' || b === '') return a === b;
  const da = digestOf(a);
  const db = digestOf(b);
  if (da && db) return da === db;
  return a === b;
}
