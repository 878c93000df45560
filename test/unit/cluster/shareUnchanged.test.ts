// A newer version of a cached pod keeps the previous version's copies of what did not change.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { decodePod } from '../../../src/cluster/decode.js';
import { shareUnchanged } from '../../../src/cluster/shareUnchanged.js';

/** The wire JSON of a pod, each call a new parse (as every watch event is). */
const wire = (o: { rv: string; state?: string; ready?: boolean; containerID?: string; uid?: string }): V1Pod =>
  decodePod(
    JSON.parse(
      JSON.stringify({
        metadata: {
          name: 'web-0',
          namespace: 'shop',
          uid: o.uid ?? 'u-1',
          resourceVersion: o.rv,
          annotations: { 'kwave.dev/in-place-state': o.state ?? '{"plan":"p"}', other: 'dropped' },
        },
        status: {
          containerStatuses: [
            {
              name: 'app',
              image: 'app:2',
              imageID: 'sha-2',
              containerID: o.containerID ?? 'c-1',
              ready: o.ready ?? true,
            },
          ],
        },
      }),
    ),
  );

describe('shareUnchanged', () => {
  test('unchanged parts are the previous version’s own objects', () => {
    const previous = wire({ rv: '1' });
    const fresh = wire({ rv: '2' });
    assert.notEqual(fresh.metadata!.annotations, previous.metadata!.annotations);
    shareUnchanged(fresh, previous);
    assert.equal(fresh.metadata!.annotations, previous.metadata!.annotations);
    assert.equal(fresh.status!.containerStatuses, previous.status!.containerStatuses);
    assert.equal(fresh.metadata!.resourceVersion, '2');
    assert.deepEqual(fresh, wire({ rv: '2' }));
  });

  test('a changed part is the new version’s, with its unchanged strings shared', () => {
    const previous = wire({ rv: '1' });
    const fresh = wire({ rv: '2', state: '{"plan":"q"}', ready: false });
    shareUnchanged(fresh, previous);
    assert.notEqual(fresh.metadata!.annotations, previous.metadata!.annotations);
    assert.equal(fresh.metadata!.annotations!['kwave.dev/in-place-state'], '{"plan":"q"}');
    const [now] = fresh.status!.containerStatuses!;
    const [before] = previous.status!.containerStatuses!;
    assert.notEqual(now, before);
    assert.equal(now!.ready, false);
    assert.equal(now!.containerID, 'c-1');
    assert.equal(before!.ready, true, 'the previous version is left as it was');
  });

  test('a container that changed, or a new incarnation, keeps its own values', () => {
    const previous = wire({ rv: '1' });
    const fresh = wire({ rv: '2', containerID: 'c-2', uid: 'u-2' });
    shareUnchanged(fresh, previous);
    assert.equal(fresh.status!.containerStatuses![0]!.containerID, 'c-2');
    assert.equal(fresh.metadata!.uid, 'u-2');
  });

  test('a pod with annotations or statuses on one side only is left alone', () => {
    const previous = decodePod({ metadata: { name: 'web-0', resourceVersion: '1' } });
    const fresh = wire({ rv: '2' });
    const expected = wire({ rv: '2' });
    shareUnchanged(fresh, previous);
    assert.deepEqual(fresh, expected);
  });
});
