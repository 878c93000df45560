// Watch events arrive as raw JSON, while client-node's typed calls return its model classes
// (timestamps as Date, and so on). The pod cache mixes both — watch events and the objects our own
// writes return — so raw objects are decoded with client-node's own deserializer to keep one shape.
// The serializer is not exported from the package root, hence the deep import (client-node 1.4
// declares no "exports" map, so the path is reachable; pinned by package.json).
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';

/** A pod as JSON (from a watch) → the V1Pod shape the typed calls return. */
export function decodePod(raw: unknown): V1Pod {
  return ObjectSerializer.deserialize(raw, 'V1Pod', '') as V1Pod;
}

/** A node as JSON (from a watch) → the V1Node shape the typed calls return. */
export function decodeNode(raw: unknown): V1Node {
  return ObjectSerializer.deserialize(raw, 'V1Node', '') as V1Node;
}
