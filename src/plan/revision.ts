// The revision of a plan: a short hash of its normalized spec. Normalizing first makes it blind to
// key order, comments, the file name and defaults written out or left implicit.
import { createHash } from 'node:crypto';
import type { Plan } from './types.js';

/** JSON with object keys sorted at every level and undefined fields left out. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export type PlanSpec = Omit<Plan, 'apiVersion' | 'kind' | 'name' | 'revision' | 'source'>;

/** Fields added later are left out at their defaults, so plans written before them keep their revision. */
function gateForRevision(gate: PlanSpec['gates'][number]): unknown {
  const p = gate.prometheus;
  if (!p) return gate;
  return {
    ...gate,
    prometheus: {
      ...p,
      dryRun: p.dryRun || undefined,
      consecutiveSuccessLimit: p.consecutiveSuccessLimit || undefined,
    },
  };
}

/**
 * First 10 hex digits of sha256 over the canonical spec; window texts are left out (their parse is
 * in), and so is the client's API rate limit: how fast kwave may talk to the API server does not
 * change what the rollout does, so changing it mid-rollout must not make another revision; nor
 * does how many nodes pre-pull at once (`prePullConcurrency`), nor how long the run waits for a
 * NotReady node before leaving its pods (`nodeGraceSeconds`).
 * Notification receivers are left out for the same reason: a new revision would refuse the pods
 * the old one left mid-flight and forget its approvals, for a change that touches no pod.
 * The clusters are left out too: what is done to each pod is the same whichever clusters the plan
 * lists, so a cluster added to a plan (or the order changed) leaves the pods already done, and the
 * gates already passed, to count in every cluster.
 * Where people's decisions are kept (`controlNamespace`) is left out as well: moving them changes no pod.
 */
export function planRevision(spec: PlanSpec): string {
  const {
    kubeApiQps: _qps,
    kubeApiBurst: _burst,
    respectPodDisruptionBudgets,
    prePull,
    prePullConcurrency: _pullers,
    nodeGraceMs: _nodeGrace,
    ...strategy
  } = spec.strategy;
  const { notify: _notify, clusters: _clusters, controlNamespace: _control, ...rest } = spec;
  const hashed = {
    ...rest,
    strategy: {
      ...strategy,
      // Left out at its default, so plans written before the field existed keep their revision.
      respectPodDisruptionBudgets: respectPodDisruptionBudgets ? undefined : false,
      prePull: prePull || undefined,
      drain: strategy.drain === 'whenRestarting' ? undefined : strategy.drain,
    },
    // Left out at its default, so plans written before the field existed keep their revision.
    failurePolicy: { ...spec.failurePolicy, countNodeFailures: spec.failurePolicy.countNodeFailures || undefined },
    owners: spec.owners === 'warn' ? undefined : spec.owners,
    gates: spec.gates.map(gateForRevision),
    window: spec.window && {
      timezone: spec.window.timezone,
      allow: spec.window.allow.map(({ text: _text, ...rest }) => rest),
    },
  };
  return createHash('sha256').update(canonicalJson(hashed)).digest('hex').slice(0, 10);
}
