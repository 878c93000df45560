// A plan that passed every check → the normalized `Plan`: defaults applied, durations in ms,
// percentages as fractions, one namespace list, and the revision hash.
import { parseAmount } from './amount.js';
import { PLAN_DEFAULTS as D } from './defaults.js';
import { parseDuration } from './duration.js';
import type { RawGate, RawNotify, RawPlan, RawSelector, RawUrlSource } from './raw.js';
import { planRevision, type PlanSpec } from './revision.js';
import type {
  Amount,
  CpuMemory,
  Gate,
  LabelSelector,
  NotifyTarget,
  Plan,
  ResourceTarget,
  UrlSource,
  Window,
} from './types.js';
import { parseWindowEntry } from './window.js';

// The checks have passed, so these parses cannot fail; a failure here is a bug, not bad input.
function amount(raw: number | string): Amount {
  const a = parseAmount(raw);
  if (!a) throw new Error(`bug: unchecked amount ${JSON.stringify(raw)}`);
  return a;
}

function ms(raw: string): number {
  const v = parseDuration(raw);
  if (v === undefined) throw new Error(`bug: unchecked duration ${JSON.stringify(raw)}`);
  return v;
}

/** Sorted so that writing the same selector in another order does not change the revision. */
function selector(raw: RawSelector): LabelSelector {
  const out: LabelSelector = {};
  if (raw.matchLabels && Object.keys(raw.matchLabels).length > 0) out.matchLabels = { ...raw.matchLabels };
  if (raw.matchExpressions && raw.matchExpressions.length > 0) {
    out.matchExpressions = raw.matchExpressions
      .map((e) =>
        e.values === undefined
          ? { key: e.key, operator: e.operator }
          : { key: e.key, operator: e.operator, values: [...new Set(e.values)].sort() },
      )
      .sort((a, b) => (a.key + '\u0000' + a.operator < b.key + '\u0000' + b.operator ? -1 : 1));
  }
  return out;
}

function gate(raw: RawGate): Gate {
  const g: Gate = {
    name: raw.name,
    pauseMs: ms(raw.pause ?? D.gate.pause),
    approval: raw.approval ?? D.gate.approval,
  };
  if (raw.afterWaves) g.afterWaves = [...new Set(raw.afterWaves)].sort((a, b) => a - b);
  const p = raw.prometheus;
  if (p) {
    const P = D.prometheus;
    g.prometheus = {
      address: p.address,
      query: p.query,
      initialDelayMs: ms(p.initialDelay ?? P.initialDelay),
      intervalMs: ms(p.interval ?? P.interval),
      count: p.count ?? P.count,
      failureLimit: p.failureLimit ?? P.failureLimit,
      inconclusiveLimit: p.inconclusiveLimit ?? P.inconclusiveLimit,
      consecutiveErrorLimit: p.consecutiveErrorLimit ?? P.consecutiveErrorLimit,
      noData: p.noData ?? P.noData,
      timeoutMs: ms(p.timeout ?? P.timeout),
      dryRun: p.dryRun ?? P.dryRun,
      consecutiveSuccessLimit: p.consecutiveSuccessLimit ?? P.consecutiveSuccessLimit,
    };
    if (p.successCondition !== undefined) g.prometheus.successCondition = p.successCondition;
    if (p.failureCondition !== undefined) g.prometheus.failureCondition = p.failureCondition;
    if (p.auth) g.prometheus.auth = { ...p.auth };
  }
  const w = raw.webhook;
  if (w) {
    g.webhook = {
      ...urlSource(w),
      timeoutMs: ms(w.timeout ?? D.webhook.timeout),
      retries: w.retries ?? D.webhook.retries,
    };
    if (w.auth) g.webhook.auth = { ...w.auth };
  }
  return g;
}

/** The one URL field the plan set; only that one, so a plan's revision is what it was before urlEnv and urlFile. */
function urlSource(raw: RawUrlSource): UrlSource {
  if (raw.urlEnv !== undefined) return { urlEnv: raw.urlEnv };
  if (raw.urlFile !== undefined) return { urlFile: raw.urlFile };
  return { url: raw.url };
}

function notifyTarget(raw: RawNotify): NotifyTarget {
  const t: NotifyTarget = {
    ...urlSource(raw),
    on: [...new Set(raw.on ?? D.notify.on)],
    format: raw.format ?? D.notify.format,
    timeoutMs: ms(raw.timeout ?? D.notify.timeout),
  };
  if (raw.auth) t.auth = { ...raw.auth };
  return t;
}

function window(raw: NonNullable<RawPlan['spec']['window']>): Window {
  return {
    timezone: raw.timezone ?? D.window.timezone,
    allow: raw.allow.map((text) => {
      const parsed = parseWindowEntry(text);
      if (!parsed.ok) throw new Error(`bug: unchecked window ${JSON.stringify(text)}`);
      return parsed.entry;
    }),
  };
}

/** Only the quantities written, in a fixed shape (an empty requests or limits is left out). */
function resourceTarget(
  raw: NonNullable<RawPlan['spec']['update']['containers'][number]['resources']>,
): ResourceTarget {
  const out: ResourceTarget = {};
  for (const kind of ['requests', 'limits'] as const) {
    const r = raw[kind];
    if (r === undefined) continue;
    const q: CpuMemory = {};
    if (r.cpu !== undefined) q.cpu = r.cpu;
    if (r.memory !== undefined) q.memory = r.memory;
    out[kind] = q;
  }
  return out;
}

function normalizeSpec(spec: RawPlan['spec']): PlanSpec {
  const s = spec.strategy ?? { waves: [...D.waves] };
  const concurrency = s.concurrency ?? D.strategy.concurrency;
  const namespaces = spec.target.namespaces ? [...spec.target.namespaces] : [spec.target.namespace as string];
  const out: PlanSpec = {
    target: { namespaces, selector: selector(spec.target.selector) },
    update: {
      // Container order means nothing to the upgrade; sorting keeps it out of the revision.
      containers: spec.update.containers
        .map((c) => ({
          name: c.name,
          ...(c.image === undefined ? {} : { image: c.image }),
          ...(c.resources === undefined ? {} : { resources: resourceTarget(c.resources) }),
        }))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
    },
    readinessGate: {
      conditionType: spec.readinessGate?.conditionType ?? D.readinessGate.conditionType,
      required: spec.readinessGate?.required ?? D.readinessGate.required,
    },
    strategy: {
      waves: s.waves
        ? { kind: 'targets', targets: s.waves.map(amount) }
        : { kind: 'size', size: amount(s.waveSize as number | string) },
      concurrency,
      maxUnavailable: s.maxUnavailable === undefined ? { kind: 'count', value: concurrency } : amount(s.maxUnavailable),
      order: s.order ?? D.strategy.order,
      drainMs: (s.drainSeconds ?? D.strategy.drainSeconds) * 1000,
      drain: s.drain ?? D.strategy.drain,
      podTimeoutMs: ms(s.podTimeout ?? D.strategy.podTimeout),
      minReadyMs: (s.minReadySeconds ?? D.strategy.minReadySeconds) * 1000,
      nodeGraceMs: (s.nodeGraceSeconds ?? D.strategy.nodeGraceSeconds) * 1000,
      respectPodDisruptionBudgets: s.respectPodDisruptionBudgets ?? D.strategy.respectPodDisruptionBudgets,
      prePull: s.prePull ?? D.strategy.prePull,
      prePullConcurrency: s.prePullConcurrency ?? D.strategy.prePullConcurrency,
      ...(s.kubeApiQps === undefined ? {} : { kubeApiQps: s.kubeApiQps }),
      ...(s.kubeApiBurst === undefined ? {} : { kubeApiBurst: s.kubeApiBurst }),
    },
    failurePolicy: {
      maxFailed: amount(spec.failurePolicy?.maxFailed ?? D.failurePolicy.maxFailed),
      rollback: spec.failurePolicy?.rollback ?? D.failurePolicy.rollback,
      countNodeFailures: spec.failurePolicy?.countNodeFailures ?? D.failurePolicy.countNodeFailures,
    },
    owners: spec.owners ?? D.owners,
    controlNamespace: spec.controlNamespace ?? namespaces[0]!,
    gates: (spec.gates ?? []).map(gate),
    metrics: spec.metrics?.pushgateway === undefined ? {} : { pushgateway: spec.metrics.pushgateway },
    notify: (spec.notify ?? []).map(notifyTarget),
  };
  if (spec.window) out.window = window(spec.window);
  if (spec.clusters)
    out.clusters = {
      list: spec.clusters.map((c) => ({ name: c.name, context: c.context })),
      order: spec.clusterOrder ?? D.clusterOrder,
    };
  return out;
}

/** The normalized plan. `raw` must have passed the schema and the semantic checks. */
export function normalizePlan(raw: RawPlan, source: Plan['source']): Plan {
  const spec = normalizeSpec(raw.spec);
  return {
    apiVersion: raw.apiVersion,
    kind: raw.kind,
    name: raw.metadata.name,
    revision: planRevision(spec),
    ...spec,
    source,
  };
}
