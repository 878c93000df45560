/** Exit codes (docs/cli.md, "Exit codes"), by name. */
export const ExitCode = {
  OK: 0,
  INTERNAL: 1,
  BAD_INPUT: 2,
  HALTED: 3,
  INTERRUPTED: 4,
  /** Partial: everything that could run did, but pods wait for nodes that cannot act. */
  NODES_DOWN: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * What went wrong, for programs: each code is thrown somewhere.
 * - FIXTURE: a simulator fixture file is invalid (with `pos`).
 * - USAGE: a flag's value is wrong.
 * - REFUSED: the selection refuses the run (`kwave plan` lists why).
 * - LOCKED: another runner holds the plan's lease.
 * - KUBE: the cluster answered with an error (kubeErrorToKwave).
 * - LEASE_LOST: a write only the lease's holder may make was not sent: the lease was lost.
 *
 * An invalid plan is not thrown: loading a plan returns its `PlanError`s (plan/planError.ts),
 * every problem with file, line, column and path, and `formatPlanError` renders them (a list, so
 * that every problem is reported at once). A halted or
 * interrupted rollout is not an error either: it is the run's result (phase and exit code).
 */
export type KwaveErrorCode = 'FIXTURE' | 'USAGE' | 'REFUSED' | 'LOCKED' | 'KUBE' | 'LEASE_LOST';

/** Where in a file (a fixture) an error points. Lines and columns are 1-based. */
export interface SourcePos {
  file: string;
  line: number;
  col: number;
  /** JSON path of the offending value, e.g. `spec.strategy.maxUnavailable`. */
  path: string;
}

/** An expected failure with a code and an exit code; anything else thrown is a bug. */
export class KwaveError extends Error {
  override name = 'KwaveError';
  constructor(
    readonly code: KwaveErrorCode,
    message: string,
    readonly exitCode: ExitCode = ExitCode.BAD_INPUT,
    readonly pos?: SourcePos,
  ) {
    super(message);
  }
}
