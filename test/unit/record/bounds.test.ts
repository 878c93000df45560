// The record under the ConfigMap limit whatever the fleet and the gates: the pure encoder at
// 50,000 pods with every gate kind, and a property over random records, plan texts and other
// writers' keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fleetEvents } from '../../../bench/record/fleetEvents.js';
import {
  CONFIGMAP_DATA_LIMIT,
  cutPlanText,
  MAX_MEASURED_VALUES,
  RECORD_MARGIN_BYTES,
  byteSize,
} from '../../../src/record/bounds.js';
import { decodeRecord, encodeRecord, recordConfigMap } from '../../../src/record/codec.js';
import { LIMITS, newRecord, type RolloutRecord } from '../../../src/record/record.js';
import { applyEvent } from '../../../src/record/reducer.js';
import { RecordFolder } from '../../../src/record/recordFolder.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';

const BUDGET = CONFIGMAP_DATA_LIMIT - RECORD_MARGIN_BYTES;

const start = (planText = 'kind: RolloutPlan\n') =>
  newRecord({ plan: 'web', revision: 'r1', planText, holder: 'me@host pid 1', now: '2026-12-06T08:00:00.000Z' });

const dataBytes = (data: Record<string, string>) =>
  Object.entries(data).reduce((n, [k, v]) => n + byteSize(k) + byteSize(v), 0);

/** Encodes and checks: within the budget, and read back whole by decodeRecord. */
function encodedWithin(record: RolloutRecord, others = 0): { bytes: number; decoded: RolloutRecord } {
  const encoded = encodeRecord(record, others);
  assert.ok(encoded.ok, `the record did not fit (${encoded.bytes} bytes)`);
  assert.equal(dataBytes(encoded.data), encoded.bytes);
  assert.ok(encoded.bytes <= BUDGET - others, `${encoded.bytes} bytes, over ${BUDGET - others}`);
  const decoded = decodeRecord(recordConfigMap('web', record, encoded.data));
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.problem);
  return { bytes: encoded.bytes, decoded: decoded.record };
}

test('50,000 pods, 1,000 in flight, every gate kind after each of 50 waves: every write stays under the limit', () => {
  const folder = new RecordFolder(start('x: 1\n'.repeat(200_000)));
  let previous: RolloutEvent | undefined;
  let largest = 0;
  let midWave: RolloutRecord | undefined;
  for (const e of fleetEvents({ pods: 50_000, waveSize: 1000, concurrency: 1000, failEvery: 7, measurements: 20 })) {
    folder.apply(e);
    // Each batch fully started (1,000 in flight), and each wave's last gate ended: the largest records a write may see.
    if (
      (e.event === 'pod-step' && previous?.event === 'pod-start') ||
      (e.event === 'gate-end' && e.gate === 'per-pod-latency')
    ) {
      const { bytes, decoded } = encodedWithin(folder.record);
      largest = Math.max(largest, bytes);
      if (e.event === 'pod-step') midWave = decoded;
    }
    previous = e;
  }
  const end = encodedWithin(folder.record);
  assert.ok(largest <= BUDGET);
  assert.equal(midWave?.inFlight.length, LIMITS.inFlight);
  assert.equal(midWave?.inFlightCount, 1000);
  assert.equal(end.decoded.counts.upgraded + end.decoded.counts.failed, 50_000);
  assert.equal(end.decoded.failuresTotal, Math.ceil(50_000 / 7));
  const vectorGate = end.decoded.gates.findLast((g) => g.gate === 'per-pod-latency')!;
  const m = vectorGate.measurements!.at(-1)!;
  assert.equal((m.value as number[]).length, MAX_MEASURED_VALUES);
  assert.equal(m.valuesLeftOut, 50_000 - MAX_MEASURED_VALUES);
  // The plan text (1,000,000 bytes) is cut to its share, and the record says so.
  assert.ok(end.decoded.trimmed?.includes('the end of plan.yaml'), String(end.decoded.trimmed));
  assert.match(end.decoded.planText, /kwave kept the first lines of this plan only/);
});

test('a small record is written whole: nothing trimmed, every pod in flight listed', () => {
  let r = start();
  for (const e of fleetEvents({ pods: 40, waveSize: 40, concurrency: 40, failEvery: 1000, measurements: 1 })) {
    r = applyEvent(r, e);
    if (e.event === 'pod-step') break;
  }
  const { decoded } = encodedWithin(r);
  assert.equal(decoded.inFlight.length, 40);
  assert.equal(decoded.inFlightCount, undefined);
  assert.equal(decoded.trimmed, undefined);
  assert.equal(decoded.planText, 'kind: RolloutPlan\n');
});

test('others leave no room: not ok, with the bytes it needed', () => {
  const encoded = encodeRecord(start(), BUDGET);
  assert.equal(encoded.ok, false);
  assert.ok(encoded.bytes > 0);
});

test('cutPlanText keeps whole lines and fits its room, multi-byte text included', () => {
  const text = 'ä: "€€€"\n'.repeat(1000);
  for (const room of [200, 1000, 5000]) {
    const cut = cutPlanText(text, room);
    assert.ok(byteSize(cut) <= room, `${byteSize(cut)} > ${room}`);
    assert.ok(text.startsWith(cut.slice(0, cut.indexOf('# …'))));
    assert.match(cut, /# … kwave kept the first lines/);
  }
  assert.equal(cutPlanText(text, 10), '');
});

test('property: any record, plan text up to 1 MiB and other keys up to 200 KB fits, and reads back', () => {
  const message = fc.string({ maxLength: 3000 });
  fc.assert(
    fc.property(
      fc.record({
        planBytes: fc.integer({ min: 0, max: 1024 * 1024 }),
        others: fc.integer({ min: 0, max: 200_000 }),
        inFlight: fc.integer({ min: 0, max: 3000 }),
        failures: fc.array(message, { maxLength: 80 }),
        vector: fc.integer({ min: 0, max: 20_000 }),
        gates: fc.integer({ min: 0, max: 60 }),
        name: fc.string({ minLength: 1, maxLength: 250 }),
      }),
      ({ planBytes, others, inFlight, failures, vector, gates, name }) => {
        let r = start('a'.repeat(planBytes));
        let t = 0;
        const ev = (body: object) =>
          ({ plan: 'web', time: new Date(Date.UTC(2026, 0, 1, 0, 0, t++)).toISOString(), ...body }) as RolloutEvent;
        r = applyEvent(r, ev({ event: 'wave-start', wave: 1, waves: 1, pods: inFlight, target: inFlight }));
        for (let i = 0; i < inFlight; i++) r = applyEvent(r, ev({ event: 'pod-start', wave: 1, pod: `${name}-${i}` }));
        for (const [i, msg] of failures.entries())
          r = applyEvent(
            r,
            ev({
              event: 'pod-end',
              wave: 1,
              pod: `${name}/f${i}`,
              result: 'failed',
              reason: msg,
              message: msg,
              durationMs: 1,
            }),
          );
        const value = Array.from({ length: vector }, (_, i) => i);
        for (let g = 0; g < gates; g++)
          for (let index = 1; index <= 25; index++)
            r = applyEvent(
              r,
              ev({
                event: 'gate-measurement',
                wave: 1,
                gate: `${name}${g}`,
                index,
                count: 25,
                value,
                phase: 'ok',
                message: name,
              }),
            );
        encodedWithin(r, others);
      },
    ),
    { numRuns: 25 },
  );
});
