// Shared by test/e2e/metrics-*.test.ts: a simulated cluster started in-process (its kubeconfig in
// a temp dir), the built CLI (`node bin/kwave.js`, after `npm run build`) run against it as a
// child process, and small readers of what a real Prometheus stored.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SimOptions } from '../../../src/sim/index.js';
import { startTestSim, type TestSim } from './backend.js';
import type { RolloutEvent } from '../../../src/rollout/events.js';
import { KWAVE_TIMEOUT_MS, ROOT } from './kwaveBin.js';
import { clusterReader } from './clusterRead.js';
import type { PrometheusServer } from './prometheus.js';

export { ROOT };

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/kwave.js ARGS` to its end (killed after `timeoutMs`). */
export function kwaveCli(args: string[], timeoutMs = KWAVE_TIMEOUT_MS): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/kwave.js', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The events of a `-o json` run, one JSON object per line. */
export function jsonEvents(stdout: string): RolloutEvent[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as RolloutEvent);
}

export interface World {
  sim: TestSim;
  dir: string;
  kubeconfig: string;
  /** `host:port` of the simulator's app metrics, for Prometheus' targets. */
  appTarget: string;
  /** Writes a plan file into the world's temp dir and returns its path. */
  writePlan(name: string, yaml: string): Promise<string>;
  /** Image ID of container `nginx` per pod name. */
  /** Each pod's nginx imageID, read from the API server. */
  imageIDs(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

/** A simulated cluster (default world: pods demo-0… labelled app=demo, nginx:1.14.2). */
export async function startWorld(options: SimOptions = {}): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-metrics-e2e-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const sim = await startTestSim({ pods: 4, ...options, kubeconfigOut: kubeconfig });
  const reader = clusterReader(kubeconfig);
  return {
    sim,
    dir,
    kubeconfig,
    appTarget: new URL(sim.metricsUrl).host,
    async writePlan(name, yaml) {
      const file = join(dir, `${name}.yaml`);
      await writeFile(file, yaml);
      return file;
    },
    async imageIDs() {
      const pods = await reader.pods('default');
      return new Map(
        pods.map((p) => [
          p.metadata!.name!,
          p.status?.containerStatuses?.find((c) => c.name === 'nginx')?.imageID ?? '',
        ]),
      );
    },
    async close() {
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Values of an instant query's vector (or scalar) answer, keyed by the labels named. */
export async function instant(
  prom: PrometheusServer,
  promql: string,
): Promise<{ labels: Record<string, string>; value: number }[]> {
  const r = await prom.query(promql);
  if (r.resultType === 'scalar') return [{ labels: {}, value: Number((r.result as [number, string])[1]) }];
  return (r.result as { metric: Record<string, string>; value: [number, string] }[]).map((s) => ({
    labels: s.metric,
    value: Number(s.value[1]),
  }));
}

/** The single value of an instant query; throws unless exactly one sample came back. */
export async function single(prom: PrometheusServer, promql: string): Promise<number> {
  const samples = await instant(prom, promql);
  if (samples.length !== 1) throw new Error(`${promql}: expected one sample, got ${JSON.stringify(samples)}`);
  return samples[0]!.value;
}

/**
 * The error share of the simulator's app as Prometheus measures it, for one simulator
 * (`instance`), over a short window so a gate sees a new image within seconds.
 */
export function errorRateQuery(instance: string, window = '5s'): string {
  const sel = `app="demo",instance="${instance}"`;
  return `sum(rate(sim_http_requests_total{${sel},code=~"5.."}[${window}])) / sum(rate(sim_http_requests_total{${sel}}[${window}]))`;
}

interface DashboardTarget {
  expr: string;
  refId: string;
}
export interface DashboardPanel {
  id: number;
  title: string;
  type: string;
  targets?: DashboardTarget[];
  panels?: DashboardPanel[];
  datasource?: { uid: string };
  gridPos?: unknown;
  fieldConfig?: {
    defaults?: { mappings?: { options: Record<string, { text: string }> }[] };
    overrides?: {
      matcher: { id: string; options: string };
      properties: { id: string; value: { fixedColor?: string } }[];
    }[];
  };
}

/** The parts of grafana/kwave-dashboard.json the tests read. */
export interface Dashboard {
  schemaVersion: number;
  id: number | null;
  uid: string;
  __inputs: { name: string; pluginId: string }[];
  templating: { list: { name: string; definition?: string }[] };
  panels: DashboardPanel[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(new URL('grafana/kwave-dashboard.json', `file://${ROOT}`), 'utf8'));
}

/** Every panel, including those inside collapsed rows. */
export function allPanels(panels: DashboardPanel[]): DashboardPanel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/**
 * Grafana's variables. `$__rate_interval` is what Grafana computes for a datasource with the
 * default 15 s scrape interval (4 × 15 s); `$plan` is the plan the variable query finds;
 * `$cluster` the cluster variable's value (default All, its allValue `.*`).
 */
function substitute(expr: string, plan: string, cluster = '.*'): string {
  return expr
    .replaceAll('${cluster}', cluster)
    .replaceAll('$cluster', cluster)
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__interval', '15s')
    .replaceAll('$__range', '1h')
    .replaceAll('${plan}', plan)
    .replaceAll('$plan', plan);
}

export interface PanelData {
  /** `TITLE REFID` of each query that returned no sample over the range. */
  empty: string[];
  /** Each query's series: labels and the last value in the range, keyed `TITLE REFID`. */
  last: Map<string, { labels: Record<string, string>; value: number }[]>;
}

/** Runs every panel query as Grafana does (a range query, here with a 1 s step) over [start, end]. */
export async function queryPanels(
  prom: PrometheusServer,
  plan: string,
  start: number,
  end: number,
  cluster?: string,
): Promise<PanelData> {
  const out: PanelData = { empty: [], last: new Map() };
  for (const panel of allPanels(readDashboard().panels)) {
    for (const t of panel.targets ?? []) {
      const q = new URLSearchParams({
        query: substitute(t.expr, plan, cluster),
        start: String(start),
        end: String(end),
        step: '1',
      });
      const res = await fetch(`${prom.url}/api/v1/query_range?${q}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data: { result: { metric: Record<string, string>; values: [number, string][] }[] };
      };
      if (body.status !== 'success') throw new Error(`${panel.title} ${t.refId}: ${body.error ?? res.status}`);
      const series = body.data.result.filter((s) => s.values.length > 0);
      const key = `${panel.title} ${t.refId}`;
      if (series.length === 0) out.empty.push(`${key}: ${t.expr}`);
      out.last.set(
        key,
        series.map((s) => ({ labels: s.metric, value: Number(s.values.at(-1)![1]) })),
      );
    }
  }
  return out;
}
