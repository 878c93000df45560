// Plan loading on large and hostile plans: how long `loadPlanText` takes to load or refuse a plan
// of each shape, at 2k / 8k / 32k extra keys and at the 1 MiB cap, and how long `kwave validate`'s
// text output of the refusal takes to build. Figures, not assertions: the promise
// (docs/plan-reference.md) is that any plan up to the cap loads or is refused in under 1 s.
// Medians of BENCH_REPEAT runs (default 5), wall and CPU (user + system) milliseconds: on a busy
// machine the wall time is mostly waiting for a CPU; the CPU time is what the load costs.
import { planFailureText } from '../src/cli/loadPlan.js';
import { loadPlanText, MAX_PLAN_BYTES } from '../src/plan/load.js';

const HEAD = `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata:
  name: bench
`;
const SPEC = `spec:
  target:
    namespace: default
    selector:
      matchLabels:
        app: demo
  update:
    containers:
      - name: nginx
        image: nginx:1.25.3
`;

/** Lines repeated until `count` of them, or until the plan would pass `bytes`. */
function lines(count: number, bytes: number, line: (i: number) => string): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; i < count; i++) {
    const l = line(i);
    if (size + l.length + 1 > bytes) break;
    out.push(l);
    size += l.length + 1;
  }
  return out.join('\n') + '\n';
}

/** An unknown key under spec.strategy nesting 40 levels deep, repeated: `count` keys in all. */
const DEPTH = 40;
const nested = (i: number) =>
  Array.from({ length: DEPTH }, (_, d) => `${' '.repeat(4 + 2 * d)}k${i}_${d}:${d === DEPTH - 1 ? ' 1' : ''}`).join(
    '\n',
  );

type Shape = (count: number, bytes: number) => string;

const SHAPES: Record<string, Shape> = {
  'top-level keys': (n, b) => HEAD + SPEC + lines(n, b - 400, (i) => `extra${i}: ${i}`),
  'unknown keys in spec.strategy': (n, b) =>
    HEAD + SPEC + '  strategy:\n' + lines(n, b - 400, (i) => `    extra${i}: ${i}`),
  'deeply nested unknown keys': (n, b) =>
    HEAD + SPEC + '  strategy:\n    waves: [1]\n' + lines(Math.ceil(n / DEPTH), b - 400, nested),
  'containers list': (n, b) =>
    HEAD +
    SPEC.replace(/ {6}- name: nginx\n {8}image: nginx:1.25.3\n/, '') +
    lines(n, b - 400, (i) => `      - name: c${i}\n        image: nginx:1.25.3`),
  'invalid values (many errors)': (n, b) =>
    HEAD +
    SPEC.replace(/ {6}- name: nginx\n {8}image: nginx:1.25.3\n/, '') +
    lines(n, b - 400, (i) => `      - name: C_${i}\n        image: 5`),
  'YAML aliases': (n, b) => HEAD + SPEC + 'anchors:\n  a: &a 1\n' + lines(n, b - 400, (i) => `alias${i}: *a`),
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Run {
  wall: number;
  cpu: number;
  result: string;
  /** Building the text `kwave validate` prints for a refused plan (0 when loaded). */
  text: number;
}

function once(source: string): Run {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const loaded = loadPlanText(source, 'bench.yaml');
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const used = process.cpuUsage(cpu0);
  if (loaded.ok) return { wall, cpu: (used.user + used.system) / 1000, result: 'loaded', text: 0 };
  const t1 = process.hrtime.bigint();
  const lines = planFailureText('bench.yaml', loaded).split('\n').length;
  const text = Number(process.hrtime.bigint() - t1) / 1e6;
  const n = loaded.errors.length + loaded.moreErrors;
  return { wall, cpu: (used.user + used.system) / 1000, result: `refused, ${n} errors (${lines} lines shown)`, text };
}

const SIZES: [string, number, number][] = [
  ['2k keys', 2000, MAX_PLAN_BYTES],
  ['8k keys', 8000, MAX_PLAN_BYTES],
  ['32k keys', 32000, MAX_PLAN_BYTES],
  ['1 MiB', Number.MAX_SAFE_INTEGER, MAX_PLAN_BYTES],
];
const REPEAT = Number(process.env.BENCH_REPEAT ?? 5);

loadPlanText(HEAD + SPEC, 'warm.yaml');
console.log(`medians of ${REPEAT} runs`);
console.log('shape                          size       bytes  wall ms  cpu ms  text ms  result');
for (const [shape, make] of Object.entries(SHAPES)) {
  for (const [label, count, bytes] of SIZES) {
    const source = make(count, bytes);
    const runs = Array.from({ length: REPEAT }, () => once(source));
    const col = (pick: (r: Run) => number, width: number) => median(runs.map(pick)).toFixed(0).padStart(width);
    console.log(
      `${shape.padEnd(30)} ${label.padEnd(8)} ${String(Buffer.byteLength(source)).padStart(8)} ${col((r) => r.wall, 8)} ${col((r) => r.cpu, 7)} ${col((r) => r.text, 8)}  ${runs[0]!.result}`,
    );
  }
}
