// Container image references, by the grammar registries and runtimes use:
//   reference := name [":" tag] ["@" digest]
//   name      := [domain "/"] path-component ("/" path-component)*
//   domain    := host [":" port], host a DNS name, "localhost" or "[IPv6]"
// The first component counts as a domain only when it contains "." or ":", is "localhost", or has
// uppercase letters (the same rule runtimes use to tell "myregistry:5000/app" from "library/app").
// kwave adds one rule of its own: a tag or a digest must be written, so "the target image" never
// silently means whatever ":latest" is today.
import { quoted } from './describe.js';

interface ImageRef {
  domain?: string;
  /** Repository path without the domain, e.g. `library/nginx` or `team/app`. */
  path: string;
  tag?: string;
  /** `sha256:<64 hex>` */
  digest?: string;
}

export type ImageRefResult = { ok: true; ref: ImageRef } | { ok: false; reason: string };

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN_NAME =
  /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*$/;
const IPV6 = /^\[[a-fA-F0-9:]+\]$/;
const PORT = /^[0-9]+$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const NAME_MAX = 255;

export const IMAGE_REF_EXPECTED =
  'an image reference like "nginx:1.25.3" or "registry.example.com/team/app@sha256:<64 hex digits>"';

const fail = (reason: string): ImageRefResult => ({ ok: false, reason });

function looksLikeDomain(first: string): boolean {
  return first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase();
}

function domainProblem(domain: string): string | undefined {
  let host = domain;
  const bracketEnd = domain.lastIndexOf(']');
  const colon = domain.lastIndexOf(':');
  if (colon > bracketEnd) {
    host = domain.slice(0, colon);
    const port = domain.slice(colon + 1);
    if (!PORT.test(port)) return `the registry port ${quoted(port)} is not a number`;
  }
  if (IPV6.test(host) || DOMAIN_NAME.test(host)) return undefined;
  return `the registry host ${quoted(host)} is not a DNS name or [IPv6] address`;
}

/** A reference cut into its parts by the grammar above, unchecked: what the validator and the comparer (inplace/image.ts) share. */
export interface ReferenceParts {
  domain?: string;
  /** The path components, without the domain. */
  path: string[];
  tag?: string;
  digest?: string;
}

/** Cuts `text` at "@" (digest), the last ":" after the last "/" (tag), and a leading domain (see `looksLikeDomain`). */
export function splitImageReference(text: string): ReferenceParts {
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const path = rest.split('/');
  const out: ReferenceParts = { path };
  if (path.length > 1 && looksLikeDomain(path[0] as string)) out.domain = path.shift() as string;
  if (tag !== undefined) out.tag = tag;
  if (digest !== undefined) out.digest = digest;
  return out;
}

export function parseImageRef(text: string): ImageRefResult {
  if (text.trim() === '') return fail('it is empty');
  if (/\s/.test(text)) return fail('it contains whitespace');
  const { domain, path: parts, tag, digest } = splitImageReference(text);
  if (digest !== undefined && !DIGEST.test(digest))
    return fail(`the digest ${quoted(digest)} is not "sha256:" followed by 64 lowercase hex digits`);
  if (tag !== undefined && !TAG.test(tag)) {
    return fail(
      `the tag ${quoted(tag)} is not valid (at most 128 letters, digits, "_", "." and "-", not starting with "." or "-")`,
    );
  }
  const name = (domain !== undefined ? [domain, ...parts] : parts).join('/');
  if (name === '') return fail('the repository name is empty');
  if (name.length > NAME_MAX) return fail(`the repository name has ${name.length} characters (at most ${NAME_MAX})`);

  if (domain !== undefined) {
    const problem = domainProblem(domain);
    if (problem) return fail(problem);
  }
  for (const part of parts) {
    if (PATH_COMPONENT.test(part)) continue;
    if (part !== part.toLowerCase() && PATH_COMPONENT.test(part.toLowerCase())) {
      return fail(`the repository path ${quoted(part)} has uppercase letters`);
    }
    if (part === '') return fail('the repository path has an empty component ("//" or a "/" at an end)');
    return fail(
      `the repository path component ${quoted(part)} is not valid (lowercase letters and digits, separated by ".", "_", "__" or "-")`,
    );
  }

  if (tag === undefined && digest === undefined)
    return fail('it names no tag or digest (write ":latest" if you really mean it)');
  const ref: ImageRef = { path: parts.join('/') };
  if (domain !== undefined) ref.domain = domain;
  if (tag !== undefined) ref.tag = tag;
  if (digest !== undefined) ref.digest = digest;
  return { ok: true, ref };
}
