// Library entry point: the pieces of kwave other programs may use. `runPlan` runs a plan as
// `kwave run` does (docs/architecture.md); `runRollout` is the engine under it, for callers that
// bring their own deps. The simulated cluster is its own entry point, `kwave/sim`.
export * from './errors.js';
export type { Plan } from './plan/types.js';
export { loadPlanFile, loadPlanText, type LoadResult } from './plan/load.js';
export { formatError } from './errorText.js';
export type { PlanError } from './plan/planError.js';
export { connect, Cluster, PodCache, KubeError } from './cluster/index.js';
export { decide, type DecideContext, type Step } from './inplace/decide.js';
export { runPodFlow, type PodOutcome, type FlowContext } from './inplace/executor.js';
export { selectFleet, type FleetSelection } from './rollout/select.js';
export { runRollout, rollbackRollout, type RunnerDeps, type RunResult } from './rollout/runner.js';
export { runPlan, type RunPlanOptions, type EventOutput, type ClusterEnd } from './session/runPlan.js';
export type { ConnectionOptions } from './session/connection.js';
export type { SessionIO } from './session/openCluster.js';
export type { RolloutEvent, EventSink, RolloutPhase } from './rollout/events.js';
export { KwaveMetrics } from './metrics/registry.js';
export { metricsSink } from './metrics/fromEvents.js';
export { runGate, gateChecker } from './gates/index.js';
export type { CheckGate } from './rollout/gateCheck.js';
