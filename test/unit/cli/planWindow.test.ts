// `kwave plan` on a plan whose maintenance window is closed says so, and when it next opens,
// in the text and in `-o json`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventLines } from '../../../src/cli/output/lines.js';
import { planReport, renderPlanText } from '../../../src/cli/planView.js';
import type { Plan } from '../../../src/plan/types.js';
import { selectFleet } from '../../../src/rollout/select.js';
import { makePod, NEW, OLD } from '../inplace/fixtures.js';
import { EventScript } from './outputEvents.js';
import { testPlan } from '../helpers/plans.js';

function plan(window: string): Plan {
  return testPlan({ namespace: 'default', image: NEW, extra: window });
}

const pods = Array.from({ length: 4 }, (_, i) =>
  makePod({ name: `web-${i}`, uid: `u${i}`, containers: [{ name: 'nginx', image: OLD }] }),
);
// Monday 2025-03-03 09:00 UTC.
const MONDAY_9 = Date.parse('2025-03-03T09:00:00.000Z');

function report(p: Plan, nowMs: number) {
  return planReport(p, selectFleet(p, pods, new Map()), { known: true }, nowMs);
}

describe('kwave plan and the maintenance window', () => {
  test('a closed window: the report says when it opens, and the OK line says the run will wait', () => {
    const p = plan('  window: { timezone: UTC, allow: ["Mon 22:00-23:00"] }\n');
    const r = report(p, MONDAY_9);
    assert.deepEqual(r.window, { open: false, opensAt: '2025-03-03T22:00:00.000Z', msLeft: 13 * 3_600_000 });
    const text = renderPlanText(r);
    assert.ok(
      text.includes('window: the maintenance window is closed now; it opens at 2025-03-03T22:00:00.000Z (in 13h00m)'),
      text.join('\n'),
    );
    assert.match(
      text.at(-1)!,
      /^OK: kwave run would upgrade 4 pods in 1 wave, but only once the window opens: .*22:00:00.000Z/,
    );
  });

  test('an open window is reported open and adds no line', () => {
    const p = plan('  window: { timezone: UTC, allow: ["Mon 08:00-10:00"] }\n');
    const r = report(p, MONDAY_9);
    assert.deepEqual(r.window, { open: true });
    const text = renderPlanText(r);
    assert.ok(!text.some((l) => l.startsWith('window:')));
    assert.equal(text.at(-1), 'OK: kwave run would upgrade 4 pods in 1 wave. Nothing was written.');
  });

  test('no window: no window field', () => {
    assert.equal(report(plan(''), MONDAY_9).window, undefined);
  });
});

describe('kwave run and the maintenance window', () => {
  test('the line output says the window is closed and when it opens', () => {
    const s = new EventScript();
    s.add({ event: 'window-wait', wave: 1, msLeft: 13 * 3_600_000, opensAt: '2025-03-03T22:00:00.000Z' });
    const [line] = new EventLines().plain(s.events[0]!);
    assert.match(
      line!,
      /the maintenance window is closed: wave 1 waits until it opens at 2025-03-03T22:00:00\.000Z \(in 13h00m\)$/,
    );
  });
});
