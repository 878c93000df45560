import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatHostPort, parseMetricsAddress } from '../../../src/metrics/address.js';
import { KwaveError } from '../../../src/errors.js';

describe('parseMetricsAddress', () => {
  const good: [string, ReturnType<typeof parseMetricsAddress>][] = [
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
    ['localhost:8080', { host: 'localhost', port: 8080 }],
    ['[::1]:9464', { host: '::1', port: 9464 }],
    [':9464', { host: undefined, port: 9464 }],
    ['off', null],
    ['OFF', null],
    [' 127.0.0.1:9464 ', { host: '127.0.0.1', port: 9464 }],
  ];
  for (const [text, expected] of good)
    test(`accepts ${JSON.stringify(text)}`, () => assert.deepEqual(parseMetricsAddress(text), expected));

  const bad: [string, RegExp][] = [
    ['9464', /no port/],
    ['127.0.0.1', /no port/],
    ['127.0.0.1:', /port "" is not a number/],
    ['127.0.0.1:http', /port "http" is not a number/],
    ['127.0.0.1:70000', /above 65535/],
    ['::1:9464', /IPv6 host in brackets/],
    ['[::1:9464', /no port|unclosed/],
    ['[nope]:9464', /not an IPv6 address/],
    ['bad host:9464', /not a host name/],
    ['', /no port/],
  ];
  for (const [text, re] of bad) {
    test(`refuses ${JSON.stringify(text)}`, () => {
      assert.throws(
        () => parseMetricsAddress(text),
        (err: unknown) =>
          err instanceof KwaveError &&
          err.code === 'USAGE' &&
          re.test(err.message) &&
          /expected HOST:PORT/.test(err.message),
      );
    });
  }

  test('formatHostPort brackets IPv6', () => {
    assert.equal(formatHostPort('::1', 9), '[::1]:9');
    assert.equal(formatHostPort('127.0.0.1', 9), '127.0.0.1:9');
  });
});
