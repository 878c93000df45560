// What an answer of the API server must be before it is decoded: one object, or one page of a
// list. Anything else is refused as BadResponse, so callers never read a shape they did not get.
import { KubeError } from './kubeError.js';
import type { ListPage } from './pagedList.js';
import type { CountedRequest, LaneOptions, Requester } from './requester.js';
import type { WireRequest } from './wireRequest.js';

/** A request answered with one object (refused as BadResponse if the answer is none), as wire JSON. */
export async function objectAnswer(
  requester: Requester,
  target: CountedRequest,
  req: WireRequest,
  options?: LaneOptions,
): Promise<object> {
  const answer = await requester.wire(target, req, options);
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    throw new KubeError(500, 'BadResponse', `${target.verb} ${target.resource}: the answer is not an object`);
  return answer;
}

/** One page of a list answer (refused as BadResponse without an items list). */
export function listPage(answer: unknown, what: string): ListPage<unknown> {
  const page = answer as { items?: unknown; metadata?: { resourceVersion?: string; continue?: string } } | undefined;
  if (!Array.isArray(page?.items)) throw new KubeError(500, 'BadResponse', `${what}: the answer holds no items list`);
  return { items: page.items, resourceVersion: page.metadata?.resourceVersion, continue: page.metadata?.continue };
}
