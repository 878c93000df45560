// Defaults of the plan format, in one place: the normalizer applies them, the schema's `default`
// annotations show them in editors (a test keeps the two equal), the docs list them.
// Gate defaults follow Argo Rollouts' analysis where it has one (failureLimit 0,
// inconclusiveLimit 0, consecutiveErrorLimit 4); count 1 and interval 30s make a gate one
// measurement unless asked for more; an empty result is inconclusive, which halts: no data is no
// evidence that the new image is fine.

export const PLAN_DEFAULTS = {
  readinessGate: { conditionType: 'kwave.dev/in-place-ready', required: true },
  strategy: {
    concurrency: 1,
    order: 'name',
    drainSeconds: 0,
    drain: 'whenRestarting',
    podTimeout: '5m',
    minReadySeconds: 0,
    nodeGraceSeconds: 30,
    respectPodDisruptionBudgets: true,
    prePull: false,
    prePullConcurrency: 5,
  },
  /** The waves of a plan without `strategy` (docs/plan-reference.md): one wave of every selected pod. */
  waves: ['100%'],
  failurePolicy: { maxFailed: 0, rollback: 'failed', countNodeFailures: false },
  owners: 'warn',
  gate: { pause: '0s', approval: false },
  prometheus: {
    initialDelay: '0s',
    interval: '30s',
    count: 1,
    failureLimit: 0,
    inconclusiveLimit: 0,
    consecutiveErrorLimit: 4,
    noData: 'inconclusive',
    timeout: '10s',
    dryRun: false,
    consecutiveSuccessLimit: 0,
  },
  webhook: { timeout: '10s', retries: 2 },
  window: { timezone: 'UTC' },
  notify: {
    on: ['started', 'wave-completed', 'gate', 'halted', 'completed', 'rolled-back'],
    format: 'json',
    timeout: '5s',
  },
  clusterOrder: 'sequential',
} as const;
