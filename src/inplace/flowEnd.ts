// How one pod's flow ends: one word, from the step `decide` ends it with (step.ts) to the outcome
// the executor returns (executor.ts) and the result a rollout reports (rollout/podEnd.ts says how
// `done` is named there). Past tense throughout: each word says what became of the pod.

/**
 * - done: the pod reached the flow's target (upgraded, or rolled back).
 * - failed: the new image did not prove itself; the pod keeps its gate closed.
 * - refused: the pod cannot take part (no readiness gate, no such container).
 * - foreign: another plan, revision or writer holds the pod.
 * - vanished: deleted, replaced or terminating.
 * - skipped: nothing to do (already at the target, or nothing to roll back).
 * - aborted: stopped between steps (a signal, a lost lease); the pod is left resumable. Never a step.
 */
export type FlowEnd = 'done' | 'failed' | 'refused' | 'foreign' | 'vanished' | 'skipped' | 'aborted';
