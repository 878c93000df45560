// RolloutPlan YAML for the e2e tests: one builder, so each test names only what it is about.
// Fields a test leaves out are left out of the plan too (kwave's own defaults apply), except the
// target and the update, which every plan needs: pods labelled app=demo in `default`, container
// `nginx` to nginx:1.25.3.
import { parse, stringify } from 'yaml';

export interface PlanOptions {
  name: string;
  image?: string;
  namespace?: string;
  app?: string;
  /** `strategy.waves` as YAML flow text, e.g. `[1, "100%"]`. */
  waves?: string;
  concurrency?: number;
  maxUnavailable?: number | string;
  drainSeconds?: number;
  podTimeout?: string;
  order?: string;
  maxFailed?: number | string;
  rollback?: 'none' | 'failed' | 'all';
  respectPodDisruptionBudgets?: boolean;
  prePull?: boolean;
  prePullConcurrency?: number;
  nodeGraceSeconds?: number;
  /** `spec.gates`: the items as objects, or as YAML text of a sequence (any indentation). */
  gates?: string | Record<string, unknown>[];
}

/** The fields of `o` that are set; undefined when none is (so the section is left out). */
function defined(o: Record<string, unknown>): Record<string, unknown> | undefined {
  const set = Object.entries(o).filter(([, v]) => v !== undefined);
  return set.length ? Object.fromEntries(set) : undefined;
}

/** A RolloutPlan's YAML from the options that matter to these tests. */
export function planYaml(o: PlanOptions): string {
  const plan = {
    apiVersion: 'kwave.dev/v1alpha1',
    kind: 'RolloutPlan',
    metadata: { name: o.name },
    spec: {
      target: { namespace: o.namespace ?? 'default', selector: { matchLabels: { app: o.app ?? 'demo' } } },
      update: { containers: [{ name: 'nginx', image: o.image ?? 'nginx:1.25.3' }] },
      strategy: defined({
        waves: o.waves === undefined ? undefined : (parse(o.waves) as unknown),
        concurrency: o.concurrency,
        maxUnavailable: o.maxUnavailable,
        order: o.order,
        drainSeconds: o.drainSeconds,
        podTimeout: o.podTimeout,
        respectPodDisruptionBudgets: o.respectPodDisruptionBudgets,
        prePull: o.prePull,
        prePullConcurrency: o.prePullConcurrency,
        nodeGraceSeconds: o.nodeGraceSeconds,
      }),
      failurePolicy: defined({ maxFailed: o.maxFailed, rollback: o.rollback }),
      gates: typeof o.gates === 'string' ? (parse(o.gates) as unknown) : o.gates,
    },
  };
  // lineWidth 0: no folding, so a long PromQL query stays on one line of the plan.
  return stringify(plan, { lineWidth: 0 });
}
