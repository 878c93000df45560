import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileCondition, type Condition } from '../../../src/gates/conditions.js';
import {
  classify,
  decide,
  verdictOf,
  type Classified,
  type Conditions,
  type Limits,
} from '../../../src/gates/prometheusDecision.js';
import type { QueryValue } from '../../../src/gates/prometheusResponse.js';
import type { MeasurementPhase } from '../../../src/gates/types.js';

function cel(label: string, text: string): Condition {
  const c = compileCondition(label, text);
  if (!c.ok) throw new Error(c.error);
  return c.condition;
}
const success = cel('successCondition', 'result < 0.01');
const failure = cel('failureCondition', 'result >= 0.05');
const num = (v: number): QueryValue => ({ kind: 'value', result: v, results: [v] });

describe('classify: one answer → one phase', () => {
  const rows: {
    name: string;
    value: QueryValue;
    conditions: Conditions;
    noData?: 'pass' | 'fail' | 'inconclusive';
    phase: MeasurementPhase;
    message: string | RegExp;
  }[] = [
    {
      name: 'success matched',
      value: num(0.002),
      conditions: { success, failure },
      phase: 'successful',
      message: 'result 0.002 matched successCondition result < 0.01',
    },
    {
      name: 'failure matched',
      value: num(0.083),
      conditions: { success, failure },
      phase: 'failed',
      message: 'result 0.083 matched failureCondition result >= 0.05',
    },
    {
      name: 'neither: inconclusive',
      value: num(0.03),
      conditions: { success, failure },
      phase: 'inconclusive',
      message: 'result 0.03 matched neither successCondition result < 0.01 nor failureCondition result >= 0.05',
    },
    {
      name: 'only success, false: failed',
      value: num(0.03),
      conditions: { success },
      phase: 'failed',
      message: 'result 0.03 did not match successCondition result < 0.01',
    },
    {
      name: 'only failure, false: successful',
      value: num(0.03),
      conditions: { failure },
      phase: 'successful',
      message: 'result 0.03 did not match failureCondition result >= 0.05',
    },
    {
      name: 'both true: failure wins',
      value: num(0.5),
      conditions: { success: cel('successCondition', 'result > 0.1'), failure },
      phase: 'failed',
      message: 'result 0.5 matched failureCondition result >= 0.05',
    },
    {
      name: 'NaN (0/0, no traffic) matches neither',
      value: num(NaN),
      conditions: { success, failure },
      phase: 'inconclusive',
      message: 'result NaN matched neither successCondition result < 0.01 nor failureCondition result >= 0.05',
    },
    {
      name: 'empty, noData pass',
      value: { kind: 'empty' },
      conditions: { success },
      noData: 'pass',
      phase: 'successful',
      message: 'query returned no data (noData: pass)',
    },
    {
      name: 'empty, noData fail',
      value: { kind: 'empty' },
      conditions: { success },
      noData: 'fail',
      phase: 'failed',
      message: 'query returned no data (noData: fail)',
    },
    {
      name: 'empty, noData inconclusive',
      value: { kind: 'empty' },
      conditions: { success },
      noData: 'inconclusive',
      phase: 'inconclusive',
      message: 'query returned no data (noData: inconclusive)',
    },
    {
      name: 'a list where a number is expected: evaluation error',
      value: { kind: 'value', result: [0.1, 0.2], results: [0.1, 0.2] },
      conditions: { success },
      phase: 'error',
      message: /^result \[0\.1, 0\.2\]: successCondition result < 0\.01 failed: no such overload: /,
    },
  ];
  for (const r of rows) {
    test(r.name, () => {
      const got = classify(r.value, r.conditions, r.noData ?? 'inconclusive');
      assert.equal(got.phase, r.phase);
      if (r.message instanceof RegExp) assert.match(got.message, r.message);
      else assert.equal(got.message, r.message);
    });
  }
});

describe('decide: measurements so far → continue or a result', () => {
  const m = (phase: MeasurementPhase, message = `msg-${phase}`): Classified => ({ phase, message });
  const limits = (over: Partial<Limits> = {}): Limits => ({
    count: 4,
    failureLimit: 0,
    inconclusiveLimit: 0,
    consecutiveErrorLimit: 2,
    ...over,
  });
  const rows: { name: string; ms: Classified[]; limits?: Partial<Limits>; kind: string; message?: string | RegExp }[] =
    [
      { name: 'nothing yet', ms: [], kind: 'continue' },
      { name: 'one success of four', ms: [m('successful')], kind: 'continue' },
      {
        name: 'the first failure fails with failureLimit 0, naming the measurement',
        ms: [m('successful'), m('failed', 'result 0.083 matched failureCondition result >= 0.05')],
        kind: 'failed',
        message: 'error-rate: result 0.083 matched failureCondition result >= 0.05 at measurement 2 of 4',
      },
      {
        name: 'a failure within failureLimit 1 goes on',
        ms: [m('failed')],
        limits: { failureLimit: 1 },
        kind: 'continue',
      },
      {
        name: 'the second failure beyond failureLimit 1 fails and says so',
        ms: [m('failed'), m('successful'), m('failed', 'result 1 matched failureCondition result >= 0.05')],
        limits: { failureLimit: 1 },
        kind: 'failed',
        message:
          'error-rate: result 1 matched failureCondition result >= 0.05 at measurement 3 of 4 (2 failed, failureLimit 1)',
      },
      {
        name: 'inconclusive beyond inconclusiveLimit 0',
        ms: [m('inconclusive', 'x')],
        kind: 'inconclusive',
        message: 'error-rate: x at measurement 1 of 4',
      },
      {
        name: 'inconclusive within inconclusiveLimit 1',
        ms: [m('inconclusive')],
        limits: { inconclusiveLimit: 1 },
        kind: 'continue',
      },
      { name: 'two errors in a row with limit 2 go on', ms: [m('error'), m('error')], kind: 'continue' },
      {
        name: 'three errors in a row with limit 2 fail',
        ms: [m('error'), m('error'), m('error', 'GET x: ECONNREFUSED')],
        kind: 'failed',
        message:
          'error-rate: 3 measurement errors in a row (consecutiveErrorLimit 2), the last at measurement 3 of 4: GET x: ECONNREFUSED',
      },
      {
        name: 'errors broken by a success do not add up',
        ms: [m('error'), m('error'), m('successful'), m('error')],
        kind: 'passed',
        message: /^error-rate: 1 of 4 measurements successful, 3 errors;/,
      },
      {
        name: 'consecutiveErrorLimit 0: the first error fails',
        ms: [m('error')],
        limits: { consecutiveErrorLimit: 0 },
        kind: 'failed',
      },
      {
        name: 'all successful: passed with a summary',
        ms: [
          m('successful'),
          m('successful'),
          m('successful'),
          m('successful', 'result 0 matched successCondition result < 0.01'),
        ],
        kind: 'passed',
        message: 'error-rate: 4 of 4 measurements successful; last: result 0 matched successCondition result < 0.01',
      },
      {
        name: 'tolerated failures and errors still pass if one succeeded',
        ms: [m('failed'), m('error'), m('successful'), m('successful')],
        limits: { failureLimit: 1 },
        kind: 'passed',
        message: /^error-rate: 2 of 4 measurements successful, 1 failed, 1 error; last: /,
      },
      {
        name: 'no success at all ends inconclusive',
        ms: [m('failed'), m('error')],
        limits: { count: 2, failureLimit: 1 },
        kind: 'inconclusive',
        message: /^error-rate: no successful measurement/,
      },
      { name: 'count 0 is read as 1', ms: [m('successful')], limits: { count: 0 }, kind: 'passed' },
    ];
  for (const r of rows) {
    test(r.name, () => {
      const d = decide('error-rate', r.ms, limits(r.limits));
      assert.equal(d.kind, r.kind, 'message' in d ? d.message : '');
      if (r.message instanceof RegExp) assert.match('message' in d ? d.message : '', r.message);
      else if (r.message !== undefined) assert.equal('message' in d ? d.message : '', r.message);
    });
  }
});

describe('decide with consecutiveSuccessLimit', () => {
  const m = (phase: MeasurementPhase, message = `msg-${phase}`): Classified => ({ phase, message });
  const S = m('successful');
  const F = m('failed');
  const I = m('inconclusive');
  const E = m('error');
  const limits = (over: Partial<Limits> = {}): Limits => ({
    count: 10,
    failureLimit: 1,
    inconclusiveLimit: 1,
    consecutiveErrorLimit: 2,
    consecutiveSuccessLimit: 3,
    ...over,
  });
  const rows: { name: string; ms: Classified[]; limits?: Partial<Limits>; kind: string; message?: string | RegExp }[] =
    [
      { name: 'two in a row of three needed go on', ms: [S, S], kind: 'continue' },
      {
        name: 'three in a row pass at once, before count',
        ms: [S, S, S],
        kind: 'passed',
        message:
          /^error-rate: 3 measurements successful in a row \(consecutiveSuccessLimit 3\) at measurement 3 of 10; last: /,
      },
      {
        name: 'a tolerated failure breaks the run; three more pass',
        ms: [S, F, S, S, S],
        kind: 'passed',
        message: /at measurement 5 of 10/,
      },
      { name: 'a tolerated inconclusive breaks the run', ms: [S, S, I, S, S], kind: 'continue' },
      { name: 'an error breaks the run', ms: [S, S, E, S], kind: 'continue' },
      {
        name: 'a failure beyond failureLimit still fails at once',
        ms: [S, F, S, F],
        kind: 'failed',
        message: /\(2 failed, failureLimit 1\)/,
      },
      {
        name: 'count reached without the run: inconclusive, even with successes',
        ms: [S, S, F, S, S],
        limits: { count: 5 },
        kind: 'inconclusive',
        message:
          /^error-rate: no 3 successful measurements in a row \(consecutiveSuccessLimit 3\) in 5 \(4 of 5 measurements successful, 1 failed\)/,
      },
      { name: 'limit equal to count: all must succeed', ms: [S, S, S], limits: { count: 3 }, kind: 'passed' },
      {
        name: 'limit 1 passes at the first success',
        ms: [I, S],
        limits: { consecutiveSuccessLimit: 1 },
        kind: 'passed',
      },
      {
        name: 'limit 0 is off: the old rule (one success by count)',
        ms: [F, S],
        limits: { count: 2, consecutiveSuccessLimit: 0 },
        kind: 'passed',
        message: /^error-rate: 1 of 2 measurements successful/,
      },
    ];
  for (const r of rows) {
    test(r.name, () => {
      const d = decide('error-rate', r.ms, limits(r.limits));
      assert.equal(d.kind, r.kind, 'message' in d ? d.message : '');
      if (r.message instanceof RegExp) assert.match('message' in d ? d.message : '', r.message);
      else if (r.message !== undefined) assert.equal('message' in d ? d.message : '', r.message);
    });
  }
});

describe('verdictOf: a dry run never halts, and says what would have happened', () => {
  const failed = {
    kind: 'failed' as const,
    message: 'error-rate: result 0.5 matched failureCondition result >= 0.05 at measurement 1 of 3',
  };
  const rows: {
    name: string;
    decision: Parameters<typeof verdictOf>[1];
    dryRun: boolean;
    result: string;
    message: string;
    wouldHave?: unknown;
  }[] = [
    {
      name: 'a real failure stays a failure',
      decision: failed,
      dryRun: false,
      result: 'failed',
      message: failed.message,
    },
    {
      name: 'a dry-run failure passes and keeps the failure',
      decision: failed,
      dryRun: true,
      result: 'passed',
      message:
        'error-rate: dry run; would have failed: result 0.5 matched failureCondition result >= 0.05 at measurement 1 of 3',
      wouldHave: { result: 'failed', message: failed.message },
    },
    {
      name: 'a dry-run inconclusive end passes and keeps it',
      decision: {
        kind: 'inconclusive',
        message: 'error-rate: query returned no data (noData: inconclusive) at measurement 1 of 1',
      },
      dryRun: true,
      result: 'passed',
      message:
        'error-rate: dry run; would have been inconclusive: query returned no data (noData: inconclusive) at measurement 1 of 1',
      wouldHave: {
        result: 'inconclusive',
        message: 'error-rate: query returned no data (noData: inconclusive) at measurement 1 of 1',
      },
    },
    {
      name: 'a dry-run pass is a pass, marked as a dry run',
      decision: { kind: 'passed', message: 'error-rate: 3 of 3 measurements successful' },
      dryRun: true,
      result: 'passed',
      message: 'error-rate: dry run, 3 of 3 measurements successful',
    },
  ];
  for (const r of rows) {
    test(r.name, () => {
      const v = verdictOf('error-rate', r.decision, r.dryRun);
      assert.equal(v.result, r.result);
      assert.equal(v.message, r.message);
      assert.deepEqual(v.wouldHave, r.wouldHave);
    });
  }
});
