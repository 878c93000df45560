import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSampleValue, readQueryResponse } from '../../../src/gates/prometheusResponse.js';
import { formatNumber, formatValue } from '../../../src/gates/formatValue.js';

const ok = (data: unknown) => JSON.stringify({ status: 'success', data });

describe('readQueryResponse', () => {
  test('a scalar is a number', () => {
    assert.deepEqual(readQueryResponse(200, ok({ resultType: 'scalar', result: [1700000000.1, '0.25'] })), {
      ok: true,
      value: { kind: 'value', result: 0.25, results: [0.25] },
    });
  });
  test('a one-sample vector is a number too, and a one-element list in results', () => {
    const body = ok({ resultType: 'vector', result: [{ metric: {}, value: [1700000000, '0.083'] }] });
    assert.deepEqual(readQueryResponse(200, body), {
      ok: true,
      value: { kind: 'value', result: 0.083, results: [0.083] },
    });
  });
  test('a vector of several samples is a list', () => {
    const body = ok({
      resultType: 'vector',
      result: [
        { metric: { app: 'a' }, value: [1, '0.1'] },
        { metric: { app: 'b' }, value: [1, 'NaN'] },
        { metric: { app: 'c' }, value: [1, '+Inf'] },
      ],
    });
    const r = readQueryResponse(200, body);
    assert.ok(r.ok && r.value.kind === 'value');
    assert.deepEqual(r.value.results, [0.1, NaN, Infinity]);
    assert.deepEqual(r.value.result, [0.1, NaN, Infinity]);
  });
  test('an empty vector is empty', () => {
    assert.deepEqual(readQueryResponse(200, ok({ resultType: 'vector', result: [] })), {
      ok: true,
      value: { kind: 'empty' },
    });
  });
  const errors: [string, number, string, RegExp][] = [
    [
      'an error answer',
      400,
      JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 5' }),
      /^HTTP 400: bad_data: parse error at char 5$/,
    ],
    ['a 503 without JSON', 503, 'Service Unavailable', /^HTTP 503: answer is not JSON \("Service Unavailable"\)$/],
    ['HTML from a proxy', 200, '<html>login</html>', /^HTTP 200: answer is not JSON/],
    ['a matrix', 200, ok({ resultType: 'matrix', result: [] }), /range vector/],
    ['a string', 200, ok({ resultType: 'string', result: [1, 'x'] }), /returned a string/],
    [
      'a broken sample',
      200,
      ok({ resultType: 'vector', result: [{ metric: {}, value: [1, 'abc'] }] }),
      /without a \[time, "value"\] pair/,
    ],
    ['no data', 200, JSON.stringify({ status: 'success' }), /no "data"/],
    ['a 2xx-looking body on 500', 500, ok({ resultType: 'scalar', result: [1, '1'] }), /^HTTP 500/],
  ];
  for (const [name, status, body, re] of errors) {
    test(`error: ${name}`, () => {
      const r = readQueryResponse(status, body);
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.error, re);
    });
  }
});

describe('sample values and how they read', () => {
  test('Prometheus spellings', () => {
    assert.equal(parseSampleValue('+Inf'), Infinity);
    assert.equal(parseSampleValue('-Inf'), -Infinity);
    assert.ok(Number.isNaN(parseSampleValue('NaN')));
    assert.equal(parseSampleValue('1e-3'), 0.001);
    assert.equal(parseSampleValue(''), undefined);
    assert.equal(parseSampleValue(3), undefined);
  });
  test('formatNumber', () => {
    const rows: [number, string][] = [
      [0.083, '0.083'],
      [0.08333333, '0.0833'],
      [0.5, '0.5'],
      [0, '0'],
      [12, '12'],
      [1234.56789, '1234.568'],
      [0.000123456, '0.000123'],
      [NaN, 'NaN'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
    ];
    for (const [v, s] of rows) assert.equal(formatNumber(v), s, String(v));
  });
  test('formatValue', () => {
    assert.equal(formatValue(null), 'no value');
    assert.equal(formatValue([0.1, 0.25]), '[0.1, 0.25]');
    assert.equal(formatValue([1, 2, 3, 4, 5, 6, 7]), '[1, 2, 3, 4, 5, … 7 values]');
  });
});
