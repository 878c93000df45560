// Content negotiation on Accept: a plain object (or list), a meta.k8s.io Table (`kubectl get`), or
// PartialObjectMetadata (metadata-only clients). Protobuf and YAML are not offered; a client that
// accepts nothing else gets 406.
import { notAcceptable } from './status.js';

export type Representation =
  { as: 'object' } | { as: 'table'; apiVersion: string } | { as: 'metadata'; apiVersion: string };

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [type, ...rest] = part.split(';').map((s) => s.trim());
      const params: Record<string, string> = {};
      for (const p of rest) {
        const eq = p.indexOf('=');
        if (eq > 0)
          params[p.slice(0, eq).trim().toLowerCase()] = p
            .slice(eq + 1)
            .trim()
            .replace(/^"|"$/g, '');
      }
      return { type: (type ?? '').toLowerCase(), params };
    });
}

const META_VERSIONS = new Set(['v1', 'v1beta1']);

export function negotiate(accept: string | undefined): Representation {
  if (!accept || accept.trim() === '') return { as: 'object' };
  for (const range of parseAccept(accept)) {
    const jsonLike = range.type === 'application/json' || range.type === '*/*' || range.type === 'application/*';
    if (!jsonLike) continue;
    const as = range.params.as;
    if (as === undefined) return { as: 'object' };
    if (range.params.g !== 'meta.k8s.io' || !META_VERSIONS.has(range.params.v ?? '')) continue;
    const apiVersion = `meta.k8s.io/${range.params.v}`;
    if (as === 'Table') return { as: 'table', apiVersion };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { as: 'metadata', apiVersion };
  }
  throw notAcceptable('application/json, application/json;as=Table;v=v1;g=meta.k8s.io');
}
