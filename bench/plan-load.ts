// Plan loading on large and hostile plans: how long `loadPlanText` takes to load or refuse a plan
// of each shape, at 2k / 8k / 32k extra keys and at the 1 MiB cap. Figures, not assertions: the
// promise (docs/plan-reference.md) is that any plan up to the cap loads or is refused in under 1 s.
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

type Shape = (count: number, bytes: number) => string;

const SHAPES: Record<string, Shape> = {
  'top-level keys': (n, b) => HEAD + SPEC + lines(n, b - 400, (i) => `extra${i}: ${i}`),
  'unknown keys in spec.strategy': (n, b) =>
    HEAD + SPEC + '  strategy:\n' + lines(n, b - 400, (i) => `    extra${i}: ${i}`),
  'containers list': (n, b) =>
    HEAD +
    SPEC.replace(/ {6}- name: nginx\n {8}image: nginx:1.25.3\n/, '') +
    lines(n, b - 400, (i) => `      - name: c${i}\n        image: nginx:1.25.3`),
  'YAML aliases': (n, b) => HEAD + SPEC + 'anchors:\n  a: &a 1\n' + lines(n, b - 400, (i) => `alias${i}: *a`),
};

function time(text: string): { ms: number; ok: boolean; errors: number } {
  const start = process.hrtime.bigint();
  const result = loadPlanText(text, 'bench.yaml');
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ms, ok: result.ok, errors: result.ok ? 0 : result.errors.length };
}

const SIZES: [string, number, number][] = [
  ['2k keys', 2000, MAX_PLAN_BYTES],
  ['8k keys', 8000, MAX_PLAN_BYTES],
  ['32k keys', 32000, MAX_PLAN_BYTES],
  ['1 MiB', Number.MAX_SAFE_INTEGER, MAX_PLAN_BYTES],
];

loadPlanText(HEAD + SPEC, 'warm.yaml');
console.log('shape                          size      bytes      ms  result');
for (const [shape, make] of Object.entries(SHAPES)) {
  for (const [label, count, bytes] of SIZES) {
    const text = make(count, bytes);
    const { ms, ok, errors } = time(text);
    const result = ok ? 'loaded' : `refused, ${errors} error${errors === 1 ? '' : 's'}`;
    console.log(
      `${shape.padEnd(30)} ${label.padEnd(8)} ${String(Buffer.byteLength(text)).padStart(8)} ${ms.toFixed(0).padStart(7)}  ${result}`,
    );
  }
}
