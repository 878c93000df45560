// The small parsers and checkers the loader is made of.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAmount, formatAmount } from '../../../src/plan/amount.js';
import { celProblem } from '../../../src/plan/cel.js';
import { formatPlanDuration, parseDuration } from '../../../src/plan/duration.js';
import { parseImageRef } from '../../../src/plan/imageRef.js';
import { dnsLabelProblem, labelKeyProblem, labelValueProblem } from '../../../src/plan/k8sNames.js';
import { formatPath } from '../../../src/plan/path.js';
import { closestName } from '../../../src/plan/suggest.js';
import { isKnownTimezone, parseWindowEntry } from '../../../src/plan/window.js';

describe('durations', () => {
  const good: [string, number][] = [
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['0s', 0],
    ['2m30s500ms', 150_500],
  ];
  for (const [text, ms] of good) test(`${text} = ${ms} ms`, () => assert.equal(parseDuration(text), ms));
  for (const text of ['', '5', '5 m', 'm', '1d', '-5s', '5S', 's5', '1h 30m', '.5s']) {
    test(`${JSON.stringify(text)} is not a duration`, () => assert.equal(parseDuration(text), undefined));
  }
  test('formatPlanDuration writes the largest units', () => {
    assert.equal(formatPlanDuration(5_400_000), '1h30m');
    assert.equal(formatPlanDuration(1500), '1s500ms');
    assert.equal(formatPlanDuration(0), '0s');
  });
});

describe('amounts', () => {
  test('counts and percentages', () => {
    assert.deepEqual(parseAmount(3), { kind: 'count', value: 3 });
    assert.deepEqual(parseAmount('10%'), { kind: 'fraction', value: 0.1 });
    assert.deepEqual(parseAmount('12.5%'), { kind: 'fraction', value: 0.125 });
    assert.deepEqual(parseAmount('100%'), { kind: 'fraction', value: 1 });
    assert.equal(parseAmount('10'), undefined);
    assert.equal(parseAmount(1.5), undefined);
    assert.equal(parseAmount('ten'), undefined);
    assert.equal(formatAmount({ kind: 'fraction', value: 0.125 }), '12.5%');
  });
});

describe('image references', () => {
  const good: [string, object][] = [
    ['nginx:1.25.3', { path: 'nginx', tag: '1.25.3' }],
    ['library/nginx:latest', { path: 'library/nginx', tag: 'latest' }],
    ['registry.example.com:5000/team/app:v1', { domain: 'registry.example.com:5000', path: 'team/app', tag: 'v1' }],
    ['localhost/app:dev', { domain: 'localhost', path: 'app', tag: 'dev' }],
    ['[::1]:5000/app:1', { domain: '[::1]:5000', path: 'app', tag: '1' }],
    ['ghcr.io/org/my_app__x.y-z:1.0_rc-1', { domain: 'ghcr.io', path: 'org/my_app__x.y-z', tag: '1.0_rc-1' }],
    [`nginx@sha256:${'a'.repeat(64)}`, { path: 'nginx', digest: `sha256:${'a'.repeat(64)}` }],
    [`nginx:1.25@sha256:${'0'.repeat(64)}`, { path: 'nginx', tag: '1.25', digest: `sha256:${'0'.repeat(64)}` }],
    ['Registry.Example.com/app:1', { domain: 'Registry.Example.com', path: 'app', tag: '1' }],
  ];
  for (const [text, ref] of good) {
    test(`valid: ${text}`, () => assert.deepEqual(parseImageRef(text), { ok: true, ref }));
  }
  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['nginx', /no tag or digest/],
    ['Nginx:1', /uppercase/],
    ['team/App:1', /uppercase/],
    ['nginx:', /tag "" is not valid/],
    ['nginx:-x', /tag "-x"/],
    [`nginx:${'a'.repeat(129)}`, /tag/],
    ['nginx@sha256:abc', /digest/],
    [`nginx@sha256:${'A'.repeat(64)}`, /digest/],
    [`nginx@md5:${'a'.repeat(32)}`, /digest/],
    ['nginx 1.25', /whitespace/],
    ['team//app:1', /empty component/],
    ['team/app_:1', /path component "app_"/],
    ['-team/app:1', /path component "-team"/],
    ['registry:port/app:1', /port "port" is not a number/],
    ['reg_istry.com/app:1', /registry host/],
    [`${'a'.repeat(256)}:1`, /256 characters/],
  ];
  for (const [text, reason] of bad) {
    test(`invalid: ${JSON.stringify(text.length > 40 ? text.slice(0, 40) + '…' : text)}`, () => {
      const r = parseImageRef(text);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.reason, reason);
    });
  }
});

describe('Kubernetes names', () => {
  test('DNS-1123 labels', () => {
    for (const ok of ['web', 'a', 'web-1', '0abc', 'a'.repeat(63)]) assert.equal(dnsLabelProblem(ok), undefined, ok);
    for (const bad of ['Web', 'web_1', '-web', 'web-', 'a.b', '', 'a'.repeat(64)]) assert.notEqual(dnsLabelProblem(bad), undefined, bad);
  });
  test('label keys', () => {
    for (const ok of ['app', 'app.kubernetes.io/name', 'A_b.c-D', 'example.com/x', 'a'.repeat(63)]) assert.equal(labelKeyProblem(ok), undefined, ok);
    for (const bad of ['-app', 'app-', '/app', 'Example.com/app', 'a/b/c', 'app.kubernetes.io/', 'a'.repeat(64), 'has space']) {
      assert.notEqual(labelKeyProblem(bad), undefined, bad);
    }
  });
  test('label values', () => {
    for (const ok of ['', 'web', 'v1.2_3-x', 'A'.repeat(63)]) assert.equal(labelValueProblem(ok), undefined, ok);
    for (const bad of ['front end', '-x', 'x.', 'a'.repeat(64), 'a/b']) assert.notEqual(labelValueProblem(bad), undefined, bad);
  });
});

describe('windows', () => {
  test('days, ranges, lists, every day, across midnight', () => {
    assert.deepEqual(parseWindowEntry('Mon-Fri 02:00-05:00'), {
      ok: true,
      entry: { days: [1, 2, 3, 4, 5], startMinute: 120, endMinute: 300, text: 'Mon-Fri 02:00-05:00' },
    });
    const r = (t: string) => {
      const p = parseWindowEntry(t);
      return p.ok ? [p.entry.days, p.entry.startMinute, p.entry.endMinute] : p.reason;
    };
    assert.deepEqual(r('Sat,Sun 00:00-24:00'), [[0, 6], 0, 1440]);
    assert.deepEqual(r('Fri-Mon 22:00-04:00'), [[0, 1, 5, 6], 1320, 240]);
    assert.deepEqual(r('23:30-00:30'), [[0, 1, 2, 3, 4, 5, 6], 1410, 30]);
    assert.deepEqual(r('Mon,Wed-Thu 10:00-11:00'), [[1, 3, 4], 600, 660]);
    assert.match(String(r('Mon 03:00-03:00')), /same time/);
    assert.match(String(r('Funday 01:00-02:00')), /not a day/);
    assert.match(String(r('Mon 24:00-01:00')), /not a time/);
    assert.match(String(r('Mon 01:60-02:00')), /not a time/);
    assert.match(String(r('Mon 1:00-2:00')), /form/);
  });
  test('time zones', () => {
    assert.equal(isKnownTimezone('Europe/Berlin'), true);
    assert.equal(isKnownTimezone('UTC'), true);
    assert.equal(isKnownTimezone('Mars/Olympus_Mons'), false);
  });
});

describe('CEL conditions', () => {
  test('conditions over result compile', () => {
    for (const ok of ['result < 0.01', 'result >= 0.05', 'result.all(x, x < 0.01)', 'size(result) > 0 && result[0] < 0.1', 'result == 0.0 || result > 1.0', 'result * 100 > 5', 'results.all(x, x < 0.01)']) {
      assert.equal(celProblem(ok), undefined, ok);
    }
  });
  test('syntax errors, unknown variables and non-bool results are reported, with where', () => {
    assert.deepEqual(celProblem('result <'), { reason: 'Unexpected token: EOF', offset: 8 });
    assert.deepEqual(celProblem('reslt < 1'), { reason: 'Unknown variable: reslt', offset: 0 });
    assert.deepEqual(celProblem('"ok"'), { reason: 'it yields string, not bool' });
  });
});

describe('paths and suggestions', () => {
  test('dotted paths with indices and quoted odd keys', () => {
    assert.equal(formatPath(['spec', 'gates', 0, 'name']), 'spec.gates[0].name');
    assert.equal(formatPath(['spec', 'target', 'selector', 'matchLabels', 'app.kubernetes.io/name']), 'spec.target.selector.matchLabels["app.kubernetes.io/name"]');
    assert.equal(formatPath([]), '');
  });
  test('did you mean', () => {
    const known = ['waves', 'waveSize', 'concurrency', 'maxUnavailable'];
    assert.equal(closestName('maxUnavailble', known), 'maxUnavailable');
    assert.equal(closestName('wavesize', known), 'waveSize');
    assert.equal(closestName('concurency', known), 'concurrency');
    assert.equal(closestName('colour', known), undefined);
  });
});
