import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeState, encodeState, readState, type InPlaceState } from '../../../src/inplace/state.js';
import { makePod } from './fixtures.js';

const sample: InPlaceState = {
  plan: 'web-nginx-1-25',
  revision: 'abc123',
  wave: 2,
  startedAt: '2025-01-01T00:00:00.000Z',
  direction: 'upgrade',
  containers: {
    nginx: {
      fromImage: 'nginx:1.14.2',
      fromImageID: 'docker.io/library/nginx@sha256:aa',
      fromContainerID: 'containerd://1',
      fromRestartCount: 0,
      toImage: 'nginx:1.25.3',
    },
  },
};

describe('state annotation', () => {
  test('round-trips', () => assert.deepEqual(decodeState(encodeState(sample)), { ok: true, state: sample }));

  test('encoding is stable: key and container order do not matter', () => {
    const two = { ...sample, containers: { b: sample.containers.nginx!, a: sample.containers.nginx! } };
    const reordered = {
      containers: { a: sample.containers.nginx!, b: sample.containers.nginx! },
      direction: 'upgrade' as const,
      startedAt: sample.startedAt,
      wave: 2,
      revision: 'abc123',
      plan: 'web-nginx-1-25',
    };
    assert.equal(encodeState(two), encodeState(reordered));
  });

  test('rollback fields round-trip', () => {
    const rb: InPlaceState = {
      ...sample,
      direction: 'rollback',
      containers: {
        nginx: { ...sample.containers.nginx!, toImageID: 'x@sha256:aa', originContainerID: 'containerd://0' },
      },
    };
    assert.deepEqual(decodeState(encodeState(rb)), { ok: true, state: rb });
  });

  test('a missing direction means upgrade', () => {
    const { direction: _d, ...rest } = sample;
    const d = decodeState(JSON.stringify(rest));
    assert.ok(d.ok && d.state.direction === 'upgrade');
  });

  const bad: [string, string, RegExp][] = [
    ['not JSON', '{plan:', /not JSON/],
    ['an array', '[]', /expected a JSON object/],
    ['null', 'null', /expected a JSON object/],
    [
      'no containers',
      JSON.stringify({ ...sample, containers: {} }),
      /containers: expected an object with at least one container/,
    ],
    ['wave not a number', JSON.stringify({ ...sample, wave: '2' }), /wave: expected a whole number/],
    ['bad time', JSON.stringify({ ...sample, startedAt: 'yesterday' }), /startedAt: expected an RFC 3339 time/],
    ['bad direction', JSON.stringify({ ...sample, direction: 'sideways' }), /direction/],
    [
      'container not an object',
      JSON.stringify({ ...sample, containers: { nginx: 3 } }),
      /containers.nginx: expected an object/,
    ],
    [
      'negative restart count',
      JSON.stringify({ ...sample, containers: { nginx: { ...sample.containers.nginx, fromRestartCount: -1 } } }),
      /containers.nginx.fromRestartCount/,
    ],
    [
      'empty toImage',
      JSON.stringify({ ...sample, containers: { nginx: { ...sample.containers.nginx, toImage: '' } } }),
      /containers.nginx.toImage: expected a non-empty string/,
    ],
  ];
  for (const [name, text, re] of bad) {
    test(`malformed: ${name}`, () => {
      const d = decodeState(text);
      assert.equal(d.ok, false);
      if (!d.ok) assert.match(d.error, re);
    });
  }

  test('never throws on any text', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), (text) => void decodeState(text)));
  });

  test('readState: absent, ok, malformed', () => {
    assert.deepEqual(readState(makePod()), { kind: 'absent' });
    assert.deepEqual(readState(makePod({ state: sample })), { kind: 'ok', state: sample });
    const m = readState(makePod({ state: 'garbage' }));
    assert.equal(m.kind, 'malformed');
  });
});
