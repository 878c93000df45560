// Plan loading on large and hostile plans: how long `loadPlanText` takes to load or refuse a plan
// of each shape, at 2k, 8k and 32k extra keys, at the most the token cap lets through (the largest plan
// that is parsed) and at the 1 MiB cap, how long `kwave validate`'s
// text output of the refusal takes to build, and the command as users run it: `kwave validate
// FILE` as its own process (bin/kwave.js, so dist/ must be built), under GNU time. Figures, not
// assertions (docs/plan-reference.md says what they promise). Beside each, the floor under the
// command: the CPU a bare parse of the text with the `yaml` package takes, cold, in a fresh
// process; and rows for the start of Node and of kwave.
// Medians of BENCH_REPEAT runs (default 5), wall and CPU (user + system) milliseconds: on a busy
// machine the wall time is mostly waiting for a CPU; the CPU time is what the load costs.
// BENCH_SHAPES=top,aliases runs only the shapes whose names hold one of those words.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planFailureText } from '../src/cli/loadPlan.js';
import { loadPlanText, MAX_PLAN_BYTES } from '../src/plan/load.js';
import { pastTokenCap } from '../src/plan/yamlSource.js';
import { requireGnuTime, runTimed } from './fleet/processes.js';

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

/** The most lines of `make` whose plan stays within the token cap: the largest plan of that shape that is parsed. */
function atTokenCap(make: Shape): number {
  let low = 0;
  let high = 1 << 20;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (pastTokenCap(make(mid, MAX_PLAN_BYTES)) === undefined) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** Sizes: lines of the shape (`cap`: as many as the token cap lets through), within the 1 MiB cap. */
const SIZES: [string, number | 'cap'][] = [
  ['2k keys', 2000],
  ['token cap', 'cap'],
  ['8k keys', 8000],
  ['32k keys', 32000],
  ['1 MiB', Number.MAX_SAFE_INTEGER],
];
const REPEAT = Number(process.env.BENCH_REPEAT ?? 5);
const ONLY = process.env.BENCH_SHAPES?.split(',').filter(Boolean);

/**
 * The floor: a fresh process parses the file with the `yaml` package's ES module build (the one
 * bundle-cli.mjs bundles) and prints the CPU milliseconds of the parse alone, cold as in a command.
 */
const YAML_PARSE = `
import { readFileSync } from 'node:fs';
const { parseDocument, LineCounter } = await import(import.meta.resolve('yaml/package.json').replace(/package\\.json$/, 'browser/index.js'));
const text = readFileSync(process.argv[1], 'utf8');
const before = process.cpuUsage();
parseDocument(text, { lineCounter: new LineCounter(), uniqueKeys: false, prettyErrors: false });
const used = process.cpuUsage(before);
console.log((used.user + used.system) / 1000);
`;

const dir = mkdtempSync(join(tmpdir(), 'kwave-plan-load-'));

interface ProcessRun {
  wall: number;
  cpu: number;
  code: number | null;
  printed: number;
}

/** Median wall and CPU milliseconds of `node ARGS` as a process of its own, its exit code, and the median number it printed. */
async function processRuns(args: string[]): Promise<ProcessRun> {
  const runs: ProcessRun[] = [];
  for (let i = 0; i < REPEAT; i++) {
    let printed = NaN;
    const done = await runTimed(args, {
      usageFile: join(dir, 'usage'),
      stdoutFile: join(dir, 'stdout'),
      onLine: (line) => (printed = Number(line)),
    });
    runs.push({ wall: done.usage.wallSeconds * 1000, cpu: done.usage.cpuSeconds * 1000, code: done.code, printed });
  }
  const med = (pick: (r: ProcessRun) => number) => median(runs.map(pick));
  return { wall: med((r) => r.wall), cpu: med((r) => r.cpu), code: runs[0]!.code, printed: med((r) => r.printed) };
}

const ms = (n: number, width: number) => n.toFixed(0).padStart(width);

requireGnuTime();
try {
  loadPlanText(HEAD + SPEC, 'warm.yaml');
  console.log(
    `medians of ${REPEAT} runs; library: loadPlanText in this process (warm); command: kwave validate FILE as a process; floor: the CPU of a bare yaml parse of FILE, cold, in a fresh process (add Node's start)`,
  );
  for (const [what, args] of [
    ["node -e ''", ['-e', '']],
    ['kwave --version', ['bin/kwave.js', '--version']],
    ['kwave validate plans/demo.yaml', ['bin/kwave.js', 'validate', 'plans/demo.yaml']],
  ] as const) {
    const r = await processRuns([...args]);
    console.log(`${what.padEnd(32)} wall ${ms(r.wall, 5)} ms, cpu ${ms(r.cpu, 5)} ms`);
  }
  console.log(
    '                                          library           command          yaml parse\n' +
      'shape                          size       bytes  wall ms  cpu ms  text ms  wall ms  cpu ms exit  cpu ms  result',
  );
  for (const [shape, make] of Object.entries(SHAPES)) {
    if (ONLY && !ONLY.some((word) => shape.includes(word))) continue;
    for (const [label, count] of SIZES) {
      const source = make(count === 'cap' ? atTokenCap(make) : count, MAX_PLAN_BYTES);
      const runs = Array.from({ length: REPEAT }, () => once(source));
      const col = (pick: (r: Run) => number, width: number) => ms(median(runs.map(pick)), width);
      const file = join(dir, 'plan.yaml');
      writeFileSync(file, source);
      const command = await processRuns(['bin/kwave.js', 'validate', file]);
      const floor = await processRuns(['--input-type=module', '-e', YAML_PARSE, file]);
      console.log(
        `${shape.padEnd(30)} ${label.padEnd(8)} ${String(Buffer.byteLength(source)).padStart(8)} ${col((r) => r.wall, 8)} ${col((r) => r.cpu, 7)} ${col((r) => r.text, 8)} ${ms(command.wall, 8)} ${ms(command.cpu, 7)} ${String(command.code).padStart(4)} ${ms(floor.printed, 7)}  ${runs[0]!.result}`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
