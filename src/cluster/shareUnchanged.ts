// A newer version of a cached pod takes from the version it replaces what did not change. Pure
// but for writing into the fresh view, which nothing else holds yet.
import type { V1Pod } from '@kubernetes/client-node';
import { sameMembers } from '../sameMembers.js';

type Json = Record<string, unknown>;

/**
 * Gives `fresh`, a newer version of the pod whose view is `previous` (both decodePod's), what did
 * not change from `previous` itself: its name and uid, its annotations (the in-place state, ~440
 * bytes) and its container statuses. Each version comes off the wire with new copies of them, and
 * the cache holds a version for seconds, long enough for a young-generation collection to promote
 * it: without this, each of a pod's ~8 versions in a rollout left its own copies in the old
 * generation, garbage among the pods the cache keeps.
 */
export function shareUnchanged(fresh: V1Pod, previous: V1Pod): void {
  const md = fresh.metadata as Json | undefined;
  const prevMd = previous.metadata as Json | undefined;
  if (md && prevMd) {
    if (md.name === prevMd.name) md.name = prevMd.name;
    if (md.uid === prevMd.uid) md.uid = prevMd.uid;
    const annotations = md.annotations as Json | undefined;
    const prevAnnotations = prevMd.annotations as Json | undefined;
    if (annotations && prevAnnotations) {
      if (sameMembers(annotations, prevAnnotations)) md.annotations = prevAnnotations;
      else for (const k in annotations) if (annotations[k] === prevAnnotations[k]) annotations[k] = prevAnnotations[k];
    }
  }
  const status = fresh.status as Json | undefined;
  const statuses = status?.containerStatuses as Json[] | undefined;
  const prevStatuses = previous.status?.containerStatuses as unknown as Json[] | undefined;
  if (!status || !statuses || !prevStatuses) return;
  let all = statuses.length === prevStatuses.length;
  for (let i = 0; i < statuses.length; i++) {
    const now = statuses[i]!;
    const prev = prevStatuses[i];
    if (prev === undefined) all = false;
    else if (sameMembers(now, prev)) statuses[i] = prev;
    else {
      all = false;
      if (now.containerID === prev.containerID) now.containerID = prev.containerID;
    }
  }
  if (all) status.containerStatuses = prevStatuses;
}
