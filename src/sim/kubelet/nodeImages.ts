// A node's image cache as its status reports it (status.images), from the kubelet's cache. Pure.
import { imageIdOf, type ImageTable } from '../images.js';

/** A node's status.images entry. */
export interface NodeImage {
  names: string[];
  sizeBytes: number;
}

/**
 * A node's image cache as its status reports it: one entry per image (by digest), named by
 * `repo@digest` and every tag of it present, largest first, at most 50 (the kubelet's default
 * nodeStatusMaxImages).
 */
export function nodeImageList(present: ReadonlySet<string>, images: ImageTable): NodeImage[] {
  const byId = new Map<string, NodeImage>();
  for (const fullName of [...present].sort()) {
    const info = images.lookup(fullName);
    if (!info) continue;
    const id = imageIdOf(info);
    const entry = byId.get(id) ?? { names: [id], sizeBytes: info.sizeBytes };
    entry.names.push(fullName);
    byId.set(id, entry);
  }
  return [...byId.values()]
    .sort((a, b) => b.sizeBytes - a.sizeBytes || (a.names[0]! < b.names[0]! ? -1 : 1))
    .slice(0, 50);
}
