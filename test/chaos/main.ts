// `npm run chaos -- --scenarios N --seed S [--parallel P] [--time-scale F]`, or
// `npm run chaos -- --scenario-seed X` to replay one scenario. Prints one line per scenario, a
// seed and a one-line replay command for each failing one, and a summary line: scenarios, faults
// injected by kind, kills, violations. Exit 1 if any scenario broke an invariant.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { LIBFAKETIME, runScenario } from './harness.js';
import { drawScenario, faultKinds, scenarioSeed, type Scenario } from './scenario.js';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function wholeNumber(name: string, fallback: number): number {
  const raw = flag(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`chaos: ${name} expects a whole number, found "${raw}"`);
    process.exit(2);
  }
  return n;
}

const replay = flag('--scenario-seed');
const seed = wholeNumber('--seed', 1);
const count = replay === undefined ? wholeNumber('--scenarios', 50) : 1;
const parallel = Math.max(1, wholeNumber('--parallel', 2));
const timeScale = Number(flag('--time-scale') ?? '0.1');

// Part b needs root for a PID namespace and libfaketime for the skewed clock; without them the
// scenarios run without those faults, and the summary says so.
const canUnshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
const canSkew = existsSync(LIBFAKETIME);
if (!canUnshare) console.log('chaos: `unshare --pid` is not available (needs root): second runners start in this PID namespace');
if (!canSkew) console.log('chaos: faketime is not installed (apt-get install faketime): no skewed clocks');

const scenarios: { index: number; scenario: Scenario }[] = Array.from({ length: count }, (_, index) => ({
  index,
  scenario: withCapabilities(drawScenario(replay === undefined ? scenarioSeed(seed, index) : Number(replay))),
}));

function withCapabilities(s: Scenario): Scenario {
  return { ...s, skewSeconds: canSkew ? s.skewSeconds : 0 };
}

const faults = new Map<string, number>();
let kills = 0;
let interrupted = 0;
let violations = 0;
let failed = 0;
const started = Date.now();

async function worker(queue: typeof scenarios): Promise<void> {
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { index, scenario } = next;
    const kinds = faultKinds(scenario);
    for (const k of kinds) faults.set(k.replace(/\(.*\)$/, ''), (faults.get(k.replace(/\(.*\)$/, '')) ?? 0) + 1);
    const result = await runScenario(scenario, { timeScale, canUnshare });
    kills += result.kills;
    interrupted += result.interrupted;
    violations += result.violations.length;
    const head = `#${index} seed ${scenario.seed}: ${scenario.pods} pods, ${kinds.join(', ') || 'no faults'}; ${result.runs} runs, ${result.kills} kills${result.interrupted ? `, ${result.interrupted} interrupted (exit 4)` : ''}, exit ${result.exitCode}, ${(result.durationMs / 1000).toFixed(1)}s`;
    if (result.violations.length === 0) {
      console.log(`ok   ${head}`);
    } else {
      failed++;
      console.log(`FAIL ${head}`);
      for (const line of result.violations) console.log(`     - ${line}`);
      console.log(`     replay: npm run chaos -- --scenario-seed ${scenario.seed}`);
      console.log(result.logs.split('\n').map((l) => `     | ${l}`).join('\n'));
    }
  }
}

const queue = [...scenarios];
await Promise.all(Array.from({ length: Math.min(parallel, queue.length) }, () => worker(queue)));
const byKind = [...faults.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ');
console.log(
  `chaos: ${count} scenarios (seed ${replay ?? seed}), ${failed} failed; faults: ${byKind || 'none'}; kills ${kills}; interrupted ${interrupted}; violations ${violations}; ${((Date.now() - started) / 1000).toFixed(0)}s`,
);
process.exit(violations > 0 ? 1 : 0);
