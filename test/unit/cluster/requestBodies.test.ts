import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { conditionPatchBody, eventBody, eventName, formatTime } from '../../../src/cluster/requestBodies.js';

const at = new Date('2025-03-04T05:06:07.891Z');

describe('conditionPatchBody', () => {
  test('patches exactly the conditions it names, by type, with no resourceVersion', () => {
    assert.deepEqual(
      conditionPatchBody(
        [{ type: 'kwave.dev/in-place-ready', status: 'False', reason: 'InPlaceUpdate', message: 'upgrading' }],
        at,
      ),
      {
        status: {
          conditions: [
            {
              type: 'kwave.dev/in-place-ready',
              status: 'False',
              reason: 'InPlaceUpdate',
              message: 'upgrading',
              lastTransitionTime: '2025-03-04T05:06:07Z',
            },
          ],
        },
      },
    );
  });
  test('uses the given transition time', () => {
    const body = conditionPatchBody(
      [
        { type: 't', status: 'True', lastTransitionTime: new Date('2020-01-01T00:00:00Z') },
        { type: 'u', status: 'False' },
      ],
      at,
    );
    assert.equal(body.status.conditions[1]!.lastTransitionTime, '2025-03-04T05:06:07Z');
    assert.equal(body.status.conditions[0]!.lastTransitionTime, '2020-01-01T00:00:00Z');
    assert.equal('reason' in body.status.conditions[0]!, false);
  });
});

describe('events', () => {
  test('names an event <object>.<hex nanoseconds>', () => {
    assert.equal(eventName('web-0', new Date(1)), 'web-0.f4240');
    assert.notEqual(eventName('web-0', at, 1), eventName('web-0', at, 2));
  });
  test('builds a core/v1 Event about the object', () => {
    const e = eventBody(
      {
        involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'web', uid: 'u1', apiVersion: 'v1' },
        type: 'Warning',
        reason: 'InPlaceUpdateFailed',
        message: 'ErrImagePull: nope',
      },
      at,
    );
    assert.equal(e.kind, 'Event');
    assert.deepEqual(e.metadata, { name: eventName('web-0', at), namespace: 'web' });
    assert.deepEqual(e.involvedObject, { kind: 'Pod', name: 'web-0', namespace: 'web', apiVersion: 'v1', uid: 'u1' });
    assert.deepEqual(
      [e.type, e.reason, e.message, e.count],
      ['Warning', 'InPlaceUpdateFailed', 'ErrImagePull: nope', 1],
    );
    assert.deepEqual(e.source, { component: 'kwave' });
    assert.equal(e.firstTimestamp, formatTime(at));
  });
  test('bounds a long message', () => {
    const e = eventBody(
      {
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'n' },
        type: 'Normal',
        reason: 'R',
        message: 'x'.repeat(5000),
      },
      at,
    );
    assert.equal((e.message as string).length, 1024);
  });
});
