// A whole collection, page by page (`limit`, then `continue`). If a continue token expires (410)
// the list starts over, at most three times. The result's resourceVersion is the first page's:
// the snapshot all pages belong to.
import { KubeError } from './kubeError.js';

export interface ListPage<T> {
  items: T[];
  resourceVersion?: string | undefined;
  /** The token for the next page; empty or undefined on the last one. */
  continue?: string | undefined;
}

export async function listAllPages<T>(fetchPage: (continueToken: string | undefined) => Promise<ListPage<T>>): Promise<{ items: T[]; resourceVersion: string }> {
  for (let restart = 0; ; restart++) {
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let token: string | undefined;
    try {
      do {
        const page = await fetchPage(token);
        for (const item of page.items) items.push(item);
        resourceVersion ??= page.resourceVersion;
        token = page.continue || undefined;
      } while (token);
    } catch (err) {
      if (err instanceof KubeError && err.code === 410 && token !== undefined && restart < 3) continue;
      throw err;
    }
    return { items, resourceVersion: resourceVersion ?? '' };
  }
}
