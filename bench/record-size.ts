// The rollout record's size at fleet scale: the bytes of its ConfigMap data (plan.yaml and
// status.json, keys included) as the runner would write them, for a rollout of 10,000 and 50,000
// pods with every gate kind (bench/record/fleetEvents.ts): the largest write seen (each batch of
// pods in flight, each wave's gates done) and the last, against the budget (a ConfigMap's 1 MiB
// less the margin left to approvals and control requests), and what the encoder left out.
import { fleetEvents } from './record/fleetEvents.js';
import { CONFIGMAP_DATA_LIMIT, RECORD_MARGIN_BYTES } from '../src/record/bounds.js';
import { encodeRecord } from '../src/record/codec.js';
import { newRecord } from '../src/record/record.js';
import { RecordFolder } from '../src/record/recordFolder.js';

const SIZES = (process.env.BENCH_PODS ?? '10000,50000').split(',').map(Number);
const PLAN_TEXT = 'spec:\n  target: { namespace: web }\n'.repeat(40); // a plan of about 1.4 KB

console.log(
  `budget ${CONFIGMAP_DATA_LIMIT - RECORD_MARGIN_BYTES} bytes (ConfigMap ${CONFIGMAP_DATA_LIMIT} less ${RECORD_MARGIN_BYTES})`,
);
console.log('pods    waves  in flight  largest write  last write  encode ms  left out');
for (const pods of SIZES) {
  const concurrency = Math.min(1000, pods / 10);
  const folder = new RecordFolder(
    newRecord({ plan: 'web', revision: 'r1', planText: PLAN_TEXT, holder: 'bench', now: new Date(0).toISOString() }),
  );
  let largest = 0;
  let previous = '';
  let encodeMs = 0;
  let encodes = 0;
  const encode = () => {
    const t = process.hrtime.bigint();
    const e = encodeRecord(folder.record);
    encodeMs += Number(process.hrtime.bigint() - t) / 1e6;
    encodes++;
    if (!e.ok) throw new Error(`did not fit: ${e.bytes} bytes`);
    return e;
  };
  for (const e of fleetEvents({ pods, waveSize: pods / 50, concurrency, failEvery: 7, measurements: 20 })) {
    folder.apply(e);
    if (
      (e.event === 'pod-step' && previous === 'pod-start') ||
      (e.event === 'gate-end' && e.gate === 'per-pod-latency')
    )
      largest = Math.max(largest, encode().bytes);
    previous = e.event;
  }
  const last = encode();
  console.log(
    `${String(pods).padEnd(7)} ${'50'.padStart(5)} ${String(concurrency).padStart(10)} ${String(largest).padStart(14)} ${String(last.bytes).padStart(11)} ${(encodeMs / encodes).toFixed(1).padStart(10)}  ${last.trimmed.join(', ') || 'nothing'}`,
  );
}
