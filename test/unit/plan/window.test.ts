// Maintenance window entries and time zones (src/plan/window.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isKnownTimezone, parseWindowEntry } from '../../../src/plan/window.js';

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
