// Benchmark of `kwave dashboard` at fleet scale: a simulated cluster of N pods (in this process),
// `kwave run` upgrading them (a separate process) and stopped at an approval gate after the 10%
// wave (N/10 pods done, the record as a mid-rollout leaves it), then `kwave dashboard` (a separate
// process) and headless chromium loading its page BENCH_LOADS times. Per size it prints the
// page's load time (navigation start to the rollout drawn from the first server-sent view;
// median, min, max), the page's JS heap and DOM nodes, the size of one view, and the dashboard
// process's RSS (now and peak). The view holds aggregates, so none of these should grow with N.
// Sizes: BENCH_PODS (default 100,10000).
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startSim } from '../src/sim/index.js';
import { launchBrowser, startDashboard } from '../test/e2e/helpers/dashboard.js';
import { BIN, ROOT } from '../test/e2e/helpers/kwaveBin.js';

const SIZES = (process.env.BENCH_PODS ?? '100,10000').split(',').map(Number);
const LOADS = Number(process.env.BENCH_LOADS ?? 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

function procKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

function planText(pods: number): string {
  const concurrency = Math.max(1, Math.min(100, Math.floor(pods / 20)));
  return `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: bench }
spec:
  target: { namespace: default, selector: { matchLabels: { app: demo } } }
  update: { containers: [{ name: nginx, image: "nginx:1.25.3" }] }
  strategy: { waves: [1, "10%", "100%"], concurrency: ${concurrency}, maxUnavailable: ${concurrency}, podTimeout: 5m }
  gates: [{ name: sign-off, afterWaves: [2], approval: true }]
`;
}

console.log('pods    load median (min–max)   JS heap   DOM nodes   view bytes   dashboard RSS (peak)');
for (const pods of SIZES) {
  const dir = mkdtempSync(path.join(tmpdir(), 'kwave-bench-dashboard-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  const sim = await startSim({ pods, kubeconfigOut: kubeconfig, timeScale: 0.1 });
  writeFileSync(path.join(dir, 'bench.yaml'), planText(pods));
  const run = spawn(
    process.execPath,
    [BIN, 'run', path.join(dir, 'bench.yaml'), '--kubeconfig', kubeconfig, '--metrics-address', 'off', '-o', 'json'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    run.stdout.on('data', (c: Buffer) => {
      out += String(c);
      if (out.includes('"gate-approval-wait"')) resolve();
    });
    run.on('close', (code) =>
      reject(new Error(`kwave run ended (${code}) before the approval gate:\n${out.slice(-2000)}`)),
    );
  });
  const dashboard = await startDashboard(kubeconfig);
  const browser = await launchBrowser();
  const loads: number[] = [];
  let heap = 0;
  let nodes = 0;
  for (let i = 0; i < LOADS; i++) {
    const page = await browser.newPage();
    await page.goto(dashboard.url);
    await page.locator('#summary h2').waitFor();
    loads.push(await page.evaluate(() => performance.now()));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
    heap = metrics.find((m) => m.name === 'JSHeapUsedSize')!.value;
    nodes = metrics.find((m) => m.name === 'Nodes')!.value;
    await page.close();
  }
  const viewBytes = (await (await fetch(`${dashboard.url}api/view`)).text()).length;
  const pid = dashboard.child.pid!;
  const rss = procKb(pid, 'VmRSS');
  const peak = procKb(pid, 'VmHWM');
  console.log(
    `${String(pods).padEnd(7)} ${`${median(loads).toFixed(0)} ms (${Math.min(...loads).toFixed(0)}–${Math.max(...loads).toFixed(0)})`.padEnd(23)} ` +
      `${`${(heap / 1024 / 1024).toFixed(1)} MB`.padEnd(9)} ${String(nodes).padEnd(11)} ${String(viewBytes).padEnd(12)} ${mb(rss)} (${mb(peak)})`,
  );
  await browser.close();
  await dashboard.stop();
  run.kill('SIGKILL');
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
