// A whole collection, page by page (`limit`, then `continue`). If a continue token expires (410)
// the list starts over, at most three times. The result's resourceVersion is the first page's:
// the snapshot all pages belong to.
//
// The next page is asked for before this one is decoded, so the server prepares it while kwave
// decodes: at 50,000 pods, `kwave plan` otherwise spent about a second waiting between pages.
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

/**
 * Hands every page of a collection to `onPage`, in order: `fetchPage` asks for one page (as it
 * comes off the wire), `decode` turns its items into the caller's (and may throw to refuse them).
 */
export async function forEachPage<R, T>(
  fetchPage: (continueToken: string | undefined) => Promise<ListPage<R>>,
  decode: (items: R[]) => T[],
  onPage: PageSink<T>,
): Promise<{ resourceVersion: string }> {
  for (let restart = 0; ; restart++) {
    let resourceVersion: string | undefined;
    let token: string | undefined;
    try {
      let next: Promise<ListPage<R>> | undefined = fetchPage(undefined);
      for (let first = true; next; first = false) {
        const page: ListPage<R> = await next;
        resourceVersion ??= page.resourceVersion;
        token = page.continue || undefined;
        next = token === undefined ? undefined : fetchPage(token);
        // Awaited on the next turn; if decoding this page throws first, its failure is moot.
        next?.catch(() => undefined);
        onPage(decode(page.items), first);
      }
    } catch (err) {
      if (err instanceof KubeError && err.code === 410 && token !== undefined && restart < 3) continue;
      throw err;
    }
    return { resourceVersion: resourceVersion ?? '' };
  }
}

/** Every item of a collection in one list (forEachPage's pages joined). */
export async function listAllPages<R, T>(fetchPage: (continueToken: string | undefined) => Promise<ListPage<R>>, decode: (items: R[]) => T[]): Promise<{ items: T[]; resourceVersion: string }> {
  let items: T[] = [];
  const { resourceVersion } = await forEachPage(fetchPage, decode, (page, first) => {
    if (first) items = [];
    for (const item of page) items.push(item);
  });
  return { items, resourceVersion };
}
