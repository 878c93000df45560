// `npm run chaos -- --scenarios N --seed S [--parallel P] [--time-scale F] [--control-plane real
// [--kubelet real]]`, or `npm run chaos -- --scenario-seed X [--control-plane real …]` to replay one scenario. Prints
// one line per scenario, a seed and a one-line replay command for each failing one, and a summary
// line: scenarios, faults injected by kind, kills, violations (on real also the 410s seen and
// kwave's re-lists). Exit 1 if any scenario broke an invariant.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { LIBFAKETIME, runScenario } from './harness.js';
import { drawScenario, faultKinds, scenarioSeed, type Backend, type KubeletKind, type Scenario } from './scenario.js';

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

const backendFlag = flag('--control-plane') ?? 'embedded';
if (backendFlag !== 'embedded' && backendFlag !== 'real') {
  console.error(`chaos: --control-plane expects embedded or real, found "${backendFlag}"`);
  process.exit(2);
}
const backend: Backend = backendFlag;
const kubeletFlag = flag('--kubelet') ?? 'simulated';
if ((kubeletFlag !== 'simulated' && kubeletFlag !== 'real') || (kubeletFlag === 'real' && backend !== 'real')) {
  console.error(
    `chaos: --kubelet expects simulated or real (real only with --control-plane real), found "${kubeletFlag}"`,
  );
  process.exit(2);
}
const kubelet: KubeletKind = kubeletFlag;
const replay = flag('--scenario-seed');
const seed = wholeNumber('--seed', 1);
const count = replay === undefined ? wholeNumber('--scenarios', 50) : 1;
// A real control plane takes a CPU-second or more to start and serve: one scenario at a time there.
const parallel = Math.max(1, wholeNumber('--parallel', backend === 'real' ? 1 : 2));
// On real, kubelet timings long enough that the apiserver and etcd faults land mid-wave.
const timeScale = Number(flag('--time-scale') ?? (backend === 'real' ? '1' : '0.1'));
const backendFlags =
  (backend === 'real' ? ' --control-plane real' : '') + (kubelet === 'real' ? ' --kubelet real' : '');

// Part b needs root for a PID namespace and libfaketime for the skewed clock; without them the
// scenarios run without those faults, and the summary says so.
const canUnshare = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
const canSkew = existsSync(LIBFAKETIME);
if (!canUnshare)
  console.log('chaos: `unshare --pid` is not available (needs root): second runners start in this PID namespace');
if (!canSkew) console.log('chaos: faketime is not installed (apt-get install faketime): no skewed clocks');

const scenarios: { index: number; scenario: Scenario }[] = Array.from({ length: count }, (_, index) => ({
  index,
  scenario: withCapabilities(
    drawScenario(replay === undefined ? scenarioSeed(seed, index) : Number(replay), backend, kubelet),
  ),
}));

function withCapabilities(s: Scenario): Scenario {
  return { ...s, skewSeconds: canSkew ? s.skewSeconds : 0 };
}

const faults = new Map<string, number>();
let kills = 0;
let violations = 0;
let failed = 0;
let observer410 = 0;
let kwaveRelists = 0;
let with410 = 0;
let tainted = 0;
let interrupted = 0;
let notStarted = 0;
/** Real, through the fault proxy: scenarios with a slow watch, kwave's watch chunks it held back, streams it cut. */
const proxied = { scenarios: 0, delayedChunks: 0, cuts: 0 };
const landed = { evictions: 0, crashes: 0, nodeDeletions: 0 };
/** Per real fault kind: scenarios with it, and those where a watch was answered 410 Gone. */
const goneByKind = new Map<string, { scenarios: number; gone: number; relisted: number }>();
const startups: number[] = [];
const started = Date.now();

async function worker(queue: typeof scenarios): Promise<void> {
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { index, scenario } = next;
    const kinds = faultKinds(scenario);
    for (const k of kinds) faults.set(k.replace(/\(.*\)$/, ''), (faults.get(k.replace(/\(.*\)$/, '')) ?? 0) + 1);
    // A cluster that could not start (a real control plane on a starved machine) is no verdict on
    // kwave: reported and counted apart, and the run goes on.
    const result = await runScenario(scenario, { timeScale, canUnshare }).catch((err: unknown) => err as Error);
    if (result instanceof Error) {
      notStarted++;
      console.log(`SKIP #${index} seed ${scenario.seed}: the cluster did not start: ${result.message.split('\n')[0]}`);
      continue;
    }
    kills += result.kills;
    violations += result.violations.length;
    observer410 += result.faults.observer410;
    kwaveRelists += result.faults.kwaveRelists;
    if (result.faults.observer410 + result.faults.kwaveRelists > 0) with410++;
    if (result.nodesTainted > 0) tainted++;
    interrupted += result.interrupted;
    landed.evictions += result.landed.evictions;
    landed.crashes += result.landed.crashes;
    landed.nodeDeletions += result.landed.nodeDeletions;
    for (const k of kinds.filter((k) =>
      ['apiserver-restart', 'etcd-restart', 'etcd-pause', 'watch-expiry-410'].includes(k),
    )) {
      const g = goneByKind.get(k) ?? { scenarios: 0, gone: 0, relisted: 0 };
      g.scenarios++;
      if (result.faults.observer410 > 0) g.gone++;
      if (result.faults.kwaveRelists > 0) g.relisted++;
      goneByKind.set(k, g);
    }
    startups.push(result.startupMs);
    const slow = result.faults.slowWatch;
    if (slow) {
      proxied.scenarios++;
      proxied.delayedChunks += slow.delayedChunks;
      proxied.cuts += slow.cuts;
    }
    const slowPart = slow ? `; slow watch: ${slow.delayedChunks} chunks held back, ${slow.cuts} streams cut` : '';
    const realPart =
      backend === 'real'
        ? `; 410s: observer ${result.faults.observer410}, kwave re-lists ≥ ${result.faults.kwaveRelists}; nodes NotReady/tainted ${result.nodesTainted}${slowPart}; start ${(result.startupMs / 1000).toFixed(1)}s`
        : '';
    const { evictions, crashes, nodeDeletions } = result.landed;
    const landedPart =
      evictions + crashes + nodeDeletions > 0
        ? ` (landed: ${evictions} evictions, ${crashes} crashes, ${nodeDeletions} node deletions)`
        : '';
    const head = `#${index} seed ${scenario.seed}: ${scenario.pods} pods, ${kinds.join(', ') || 'no faults'}${landedPart}; ${result.runs} runs, ${result.kills} kills${result.interrupted ? `, ${result.interrupted} interrupted (exit 4)` : ''}, exit ${result.exitCode}, ${(result.durationMs / 1000).toFixed(1)}s${realPart}`;
    if (result.violations.length === 0) {
      console.log(`ok   ${head}`);
    } else {
      failed++;
      console.log(`FAIL ${head}`);
      for (const line of result.violations) console.log(`     - ${line}`);
      console.log(`     replay: npm run chaos --${backendFlags} --scenario-seed ${scenario.seed}`);
      console.log(
        result.logs
          .split('\n')
          .map((l) => `     | ${l}`)
          .join('\n'),
      );
    }
  }
}

const queue = [...scenarios];
await Promise.all(Array.from({ length: Math.min(parallel, queue.length) }, () => worker(queue)));
const byKind = [...faults.entries()]
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([k, n]) => `${k} ${n}`)
  .join(', ');
const median = [...startups].sort((a, b) => a - b)[Math.floor(startups.length / 2)] ?? 0;
const realSummary =
  backend === 'real'
    ? `; 410 Gone in ${with410} scenarios (observer watches ${observer410}, kwave re-lists ≥ ${kwaveRelists}; by fault: ${[...goneByKind.entries()].map(([k, g]) => `${k} ${g.gone}/${g.scenarios} observer, ${g.relisted}/${g.scenarios} kwave`).join(', ')}); nodes NotReady/tainted in ${tainted}; slow watch through the proxy in ${proxied.scenarios} (${proxied.delayedChunks} chunks held back, ${proxied.cuts} streams cut); control plane start median ${(median / 1000).toFixed(1)}s`
    : '';
console.log(
  `chaos${backend === 'real' ? ` (real control plane${kubelet === 'real' ? ', real kubelets' : ''})` : ''}: ${count} scenarios (seed ${replay ?? seed}), ${failed} failed; faults: ${byKind || 'none'}; landed: ${landed.evictions} evictions, ${landed.crashes} crashes, ${landed.nodeDeletions} node deletions; kills ${kills}; interrupted ${interrupted}${notStarted ? `; clusters that did not start ${notStarted}` : ''}; violations ${violations}${realSummary}; ${((Date.now() - started) / 1000).toFixed(0)}s`,
);
process.exit(violations > 0 ? 1 : 0);
