// Paged lists: the next page is asked for as soon as its token is known (early, from the first
// bytes of an answer, only if the guess holds), a list whose continue token expired starts over
// (and says so to the page sink), a refused page stops it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { continueTokenAhead, forEachPage, listAllPages, type ListPage } from '../../../src/cluster/pagedList.js';
import { KubeError } from '../../../src/cluster/kubeError.js';

/** Pages of two items under tokens "1", "2", …; `log` records each fetch and decode in order. */
function pages(
  count: number,
  log: string[],
  fail?: (token: string | undefined) => KubeError | undefined,
  guess?: (i: number) => string | undefined,
) {
  return async (token: string | undefined, early?: (next: string) => void): Promise<ListPage<number>> => {
    log.push(`fetch ${token ?? 'start'}`);
    const i0 = Number(token ?? 0);
    const guessed = guess?.(i0);
    if (guessed !== undefined) early?.(guessed);
    await Promise.resolve();
    const err = fail?.(token);
    if (err) throw err;
    const i = Number(token ?? 0);
    return { items: [2 * i, 2 * i + 1], resourceVersion: `rv${i}`, continue: i + 1 < count ? String(i + 1) : '' };
  };
}

describe('forEachPage', () => {
  test('asks for the next page before decoding this one; the first page gives the resourceVersion', async () => {
    const log: string[] = [];
    const seen: [number[], boolean][] = [];
    const decode = (items: number[]) => {
      log.push(`decode ${items.join(',')}`);
      return items;
    };
    const { resourceVersion } = await forEachPage(pages(3, log), decode, (items, first) => seen.push([items, first]));
    assert.equal(resourceVersion, 'rv0');
    assert.deepEqual(log, ['fetch start', 'fetch 1', 'decode 0,1', 'fetch 2', 'decode 2,3', 'decode 4,5']);
    assert.deepEqual(seen, [
      [[0, 1], true],
      [[2, 3], false],
      [[4, 5], false],
    ]);
  });

  test('an expired token (410) starts the list over, first page flagged again; listAllPages keeps only the new pass', async () => {
    const log: string[] = [];
    let expired = 0;
    const fail = (token: string | undefined) =>
      token === '2' && expired++ === 0 ? new KubeError(410, 'Expired', 'too old') : undefined;
    const firsts: boolean[] = [];
    await forEachPage(
      pages(3, log, fail),
      (items) => items,
      (_items, first) => firsts.push(first),
    );
    assert.deepEqual(firsts, [true, false, true, false, false]);
    expired = 0;
    assert.deepEqual((await listAllPages(pages(3, [], fail), (items) => items)).items, [0, 1, 2, 3, 4, 5]);
  });

  test('a page decode refuses stops the list with its error', async () => {
    const refuse = (items: number[]) => {
      if (items.includes(2)) throw new KubeError(500, 'BadResponse', 'item 0: not a pod');
      return items;
    };
    await assert.rejects(
      forEachPage(pages(3, []), refuse, () => undefined),
      /not a pod/,
    );
  });

  test('a failure of the first page is not retried, even a 410', async () => {
    const log: string[] = [];
    await assert.rejects(
      forEachPage(
        pages(3, log, (t) => (t === undefined ? new KubeError(410, 'Expired', 'gone') : undefined)),
        (i) => i,
        () => undefined,
      ),
      /gone/,
    );
    assert.deepEqual(log, ['fetch start']);
  });
});

describe('forEachPage, pages asked for early', () => {
  test('a token seen early asks for its page at once, and that page is the one used', async () => {
    const log: string[] = [];
    const items = await listAllPages(
      pages(3, log, undefined, (i) => (i + 1 < 3 ? String(i + 1) : undefined)),
      (page) => page,
    );
    assert.deepEqual(items.items, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(
      log,
      ['fetch start', 'fetch 1', 'fetch 2'],
      'each page once, all asked for before the first was read',
    );
  });

  test('a wrong early token is not used: the page the list names is asked for; wrong guesses stop at two', async () => {
    const log: string[] = [];
    const items = await listAllPages(
      pages(3, log, undefined, (i) => `wrong-${i}`),
      (page) => page,
    );
    assert.deepEqual(items.items, [0, 1, 2, 3, 4, 5]);
    assert.equal(log.filter((l) => l.startsWith('fetch wrong')).length, 2);
    assert.deepEqual(
      log.filter((l) => !l.includes('wrong')),
      ['fetch start', 'fetch 1', 'fetch 2'],
    );
  });
});

describe('continueTokenAhead', () => {
  test('finds the token of the list metadata, not one inside the items, nor a cut one', () => {
    assert.equal(
      continueTokenAhead(
        '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"eyJ2Ijo"},"items":[{"metadata',
      ),
      'eyJ2Ijo',
    );
    assert.equal(
      continueTokenAhead(
        '{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"labels":{"continue":"x"}}}]}',
      ),
      undefined,
    );
    assert.equal(continueTokenAhead('{"kind":"PodList","metadata":{"continue":"eyJ2'), undefined);
    assert.equal(continueTokenAhead('{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[]}'), undefined);
  });
});
