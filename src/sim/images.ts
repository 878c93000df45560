// The simulated registry and container runtime's view of images: how an image reference is
// normalized (as containerd does: `nginx:1.25.3` → `docker.io/library/nginx:1.25.3`), and the
// image table that says, per image, its digest, how long it takes to pull, whether the pull
// fails, whether it crashes, when it becomes ready and how many of its app requests fail.
import { createHash } from 'node:crypto';

/** A parsed, normalized image reference. */
export interface ImageRef {
  /** Registry host, e.g. `docker.io`. */
  domain: string;
  /** Repository with domain, e.g. `docker.io/library/nginx`. */
  repository: string;
  tag?: string;
  /** `sha256:<hex>` when the reference pins a digest. */
  digest?: string;
  /** The full name the runtime reports, e.g. `docker.io/library/nginx:1.25.3`. */
  fullName: string;
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/;
const DOMAIN = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d+)?$/;

/**
 * Parses an image reference the way the container runtime does, adding the default registry
 * (`docker.io`), the `library/` namespace for official images and the `latest` tag. Returns an
 * error text for what the runtime would call an invalid reference format.
 */
export function parseImageRef(ref: string): ImageRef | { error: string } {
  const invalid = { error: `couldn't parse image name "${ref}": invalid reference format` };
  if (!ref || ref.length > 255 || /\s/.test(ref)) return invalid;
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return invalid;
  }
  let tag: string | undefined;
  const lastColon = rest.lastIndexOf(':');
  if (lastColon > rest.lastIndexOf('/')) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
    if (!TAG.test(tag)) return invalid;
  }
  const parts = rest.split('/');
  let domain = 'docker.io';
  const first = parts[0] ?? '';
  if (parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    if (!DOMAIN.test(first)) return invalid;
    domain = first;
    parts.shift();
  }
  if (parts.length === 0 || parts.some((p) => !COMPONENT.test(p))) return invalid;
  if (domain === 'docker.io' && parts.length === 1) parts.unshift('library');
  const repository = `${domain}/${parts.join('/')}`;
  if (!tag && !digest) tag = 'latest';
  const fullName = digest ? `${repository}${tag ? `:${tag}` : ''}@${digest}` : `${repository}:${tag}`;
  return { domain, repository, tag, digest, fullName };
}

/** What the simulation knows about one image (one tag of a repository). */
export interface ImageInfo {
  /** The normalized name, e.g. `docker.io/library/nginx:1.25.3`. */
  fullName: string;
  repository: string;
  /** `sha256:<64 hex>`. */
  digest: string;
  sizeBytes: number;
  /** Pull time in ms (before scaling); undefined = the default timing. */
  pullMs?: number;
  /** The registry refuses the pull (as if the tag did not exist). */
  pullFails: boolean;
  /** The container exits with code 1 shortly after starting, every time. */
  crash: boolean;
  /** Time from start to ready in ms (before scaling); undefined = the default timing. */
  readyAfterMs?: number;
  /** Share (0..1) of the app's requests answered with a 5xx. */
  errorRate: number;
  /**
   * The digest the runtime ends up running, when it is not `digest`: a registry mirror serving
   * other content than the digest asked for. What kwave's DigestMismatch check guards against.
   */
  servesDigest?: string;
}

/** How an image is declared (fixture or default world), before normalization. */
export interface ImageDecl {
  /** `sha256:<64 hex>`; default: the sha256 of the normalized name. */
  digest?: string;
  /** Take the digest of another image of the table (a retag of the same content). */
  digestOf?: string;
  sizeBytes?: number;
  pullSeconds?: number;
  pull?: 'ok' | 'fail';
  crash?: boolean;
  readyAfterSeconds?: number;
  errorRate?: number;
  /** Run content of this digest instead (a misbehaving mirror); see ImageInfo.servesDigest. */
  servesDigest?: string;
}

/** The digest an image gets when none is declared: sha256 of its normalized full name. */
export function defaultDigest(fullName: string): string {
  return `sha256:${createHash('sha256').update(fullName).digest('hex')}`;
}

/** Registry-style image ID as the kubelet reports it: `docker.io/library/nginx@sha256:…`. */
export function imageIdOf(info: Pick<ImageInfo, 'repository' | 'digest' | 'servesDigest'>): string {
  return `${info.repository}@${info.servesDigest ?? info.digest}`;
}

/** The image table, keyed by normalized full name. */
export class ImageTable {
  private readonly byName = new Map<string, ImageInfo>();

  /** Builds the table; throws an Error naming the image for a bad name or an unknown `digestOf`. */
  constructor(decls: Record<string, ImageDecl>) {
    const entries = Object.entries(decls);
    const normalized = new Map<string, ImageRef>();
    for (const [name] of entries) {
      const ref = parseImageRef(name);
      if ('error' in ref) throw new Error(`image "${name}": ${ref.error}`);
      if (ref.digest) throw new Error(`image "${name}": declare images by tag; a digest goes in the "digest" field`);
      normalized.set(name, ref);
    }
    const digestOf = (name: string, seen: string[]): string => {
      const decl = decls[name];
      const ref = normalized.get(name);
      if (!decl || !ref)
        throw new Error(`image "${seen[seen.length - 1]}": digestOf "${name}" is not in the image table`);
      if (decl.digest) return decl.digest;
      if (decl.digestOf) {
        if (seen.includes(decl.digestOf))
          throw new Error(`image "${name}": digestOf forms a cycle (${[...seen, decl.digestOf].join(' → ')})`);
        return digestOf(decl.digestOf, [...seen, decl.digestOf]);
      }
      return defaultDigest(ref.fullName);
    };
    for (const [name, decl] of entries) {
      const ref = normalized.get(name)!;
      const digest = digestOf(name, [name]);
      this.byName.set(ref.fullName, {
        fullName: ref.fullName,
        repository: ref.repository,
        digest,
        sizeBytes: decl.sizeBytes ?? sizeFromDigest(digest),
        pullMs: decl.pullSeconds === undefined ? undefined : decl.pullSeconds * 1000,
        pullFails: decl.pull === 'fail',
        crash: decl.crash ?? false,
        readyAfterMs: decl.readyAfterSeconds === undefined ? undefined : decl.readyAfterSeconds * 1000,
        errorRate: decl.errorRate ?? 0,
        ...(decl.servesDigest ? { servesDigest: decl.servesDigest } : {}),
      });
    }
  }

  /**
   * What a pull of `ref` finds: the image, or undefined when the registry has no such image
   * (unknown tag, or a digest no tag of that repository has).
   */
  resolve(ref: ImageRef): ImageInfo | undefined {
    if (ref.digest) {
      for (const info of this.byName.values()) {
        if (info.repository === ref.repository && info.digest === ref.digest) return info;
      }
      return undefined;
    }
    return this.byName.get(ref.fullName);
  }

  /** Looks an image up by any spelling of its reference. */
  lookup(image: string): ImageInfo | undefined {
    const ref = parseImageRef(image);
    return 'error' in ref ? undefined : this.resolve(ref);
  }

  entries(): ImageInfo[] {
    return [...this.byName.values()];
  }
}

/** A stable, plausible image size (20–120 MB) derived from the digest. */
function sizeFromDigest(digest: string): number {
  const n = parseInt(digest.slice(-8), 16);
  return Number.isFinite(n) ? 20_000_000 + (n % 100_000_000) : 50_000_000;
}

/** The CRI error text a failed pull reports (containerd's wording for a missing reference). */
export function pullNotFoundError(fullName: string): string {
  return `rpc error: code = NotFound desc = failed to pull and unpack image "${fullName}": failed to resolve reference "${fullName}": ${fullName}: not found`;
}
