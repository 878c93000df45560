// A whole collection, page by page (`limit`, then `continue`). If a continue token expires (410)
// the list starts over, at most three times. The result's resourceVersion is the first page's:
// the snapshot all pages belong to.
//
// The next page is asked for as soon as its continue token is known, so the server prepares it
// while kwave reads this one: the API server writes a list's metadata (and so the token) before
// its items, and `fetchPage` passes it on from the first bytes of the answer (a guess, checked
// against the parsed page; a wrong one is dropped). At 50,000 pods, `kwave plan` otherwise waited
// about a second in all between pages.
import { KubeError } from './kubeError.js';

export interface ListPage<T> {
  items: T[];
  resourceVersion?: string | undefined;
  /** The token for the next page; empty or undefined on the last one. */
  continue?: string | undefined;
}

/**
 * Takes each page's decoded items as it arrives. `first` is true on the first page of a list,
 * also when the list started over after an expired token: what was taken before is then stale.
 */
export type PageSink<T> = (items: T[], first: boolean) => void;

/** Pages asked for before their turn, at most (the next, and the one after it if that came early). */
const MAX_AHEAD = 2;

/** Asks for one page; `early` may be given the next page's continue token before the page is complete. */
export type FetchPage<R> = (
  continueToken: string | undefined,
  early: (nextToken: string) => void,
) => Promise<ListPage<R>>;

/**
 * Hands every page of a collection to `onPage`, in order: `fetchPage` asks for one page (as it
 * comes off the wire), `decode` turns its items into the caller's (and may throw to refuse them).
 */
export async function forEachPage<R, T>(
  fetchPage: FetchPage<R>,
  decode: (items: R[]) => T[],
  onPage: PageSink<T>,
): Promise<{ resourceVersion: string }> {
  for (let restart = 0; ; restart++) {
    let resourceVersion: string | undefined;
    let token: string | undefined;
    // Pages asked for ahead, by token. A page asks for at most the one after it, and no more than
    // MAX_AHEAD are out: a wrong guess cannot start a chain of its own through the whole list.
    const ahead = new Map<string, Promise<ListPage<R>>>();
    const early = (nextToken: string) => {
      if (!ahead.has(nextToken) && ahead.size < MAX_AHEAD) ahead.set(nextToken, ask(nextToken, true));
    };
    const ask = (t: string | undefined, later = false): Promise<ListPage<R>> => {
      // Early pages are sent a microtask later: one whose token comes at once finds its page in `ahead`.
      const page = later ? Promise.resolve(t).then((pageToken) => fetchPage(pageToken, early)) : fetchPage(t, early);
      // Awaited when its turn comes; one asked on a wrong guess, or after a failure, is moot.
      page.catch(() => undefined);
      return page;
    };
    try {
      let next: Promise<ListPage<R>> | undefined = ask(undefined);
      for (let first = true; next; first = false) {
        const page: ListPage<R> = await next;
        resourceVersion ??= page.resourceVersion;
        token = page.continue || undefined;
        next = token === undefined ? undefined : (ahead.get(token) ?? ask(token));
        if (token !== undefined) ahead.delete(token);
        onPage(decode(page.items), first);
      }
    } catch (err) {
      if (err instanceof KubeError && err.code === 410 && token !== undefined && restart < 3) continue;
      throw err;
    }
    return { resourceVersion: resourceVersion ?? '' };
  }
}

/**
 * The continue token in the first bytes of a list's JSON, where the API server writes the list's
 * metadata, before its items; undefined when it is not there (yet). Pure.
 */
export function continueTokenAhead(head: string): string | undefined {
  const items = head.indexOf('"items"');
  return /"continue":"([^"\\]+)"/.exec(items === -1 ? head : head.slice(0, items))?.[1];
}

/** Every item of a collection in one list (forEachPage's pages joined). */
export async function listAllPages<R, T>(
  fetchPage: FetchPage<R>,
  decode: (items: R[]) => T[],
): Promise<{ items: T[]; resourceVersion: string }> {
  let items: T[] = [];
  const { resourceVersion } = await forEachPage(fetchPage, decode, (page, first) => {
    if (first) items = [];
    for (const item of page) items.push(item);
  });
  return { items, resourceVersion };
}
