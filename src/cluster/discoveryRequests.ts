// What the API server serves, by discovery: the core group's resource list (`GET /api/v1`), as
// kubectl reads it. One request; asked once per run where a feature needs it.
import { objectAnswer } from './answers.js';
import type { Requester } from './requester.js';

/** Whether `/api/v1` lists `name` (a resource or a subresource, e.g. `pods/resize`). */
export async function servesSubresource(requester: Requester, name: string): Promise<boolean> {
  const list = (await objectAnswer(
    requester,
    { verb: 'get', resource: 'discovery' },
    { method: 'GET', path: '/api/v1' },
  )) as { resources?: { name?: unknown }[] } | undefined;
  return (list?.resources ?? []).some((r) => r.name === name);
}
