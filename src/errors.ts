/** Exit codes of the CLI, by name (docs/errors.md). */
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
 * What went wrong, for programs: one union of every code kwave reports (docs/errors.md lists
 * them with their exit codes).
 * - FIXTURE: a simulator fixture file is invalid (with `pos`).
 * - USAGE: a flag's value is wrong.
 * - REFUSED: the selection refuses the run (`kwave plan` lists why).
 * - LOCKED: another runner holds the plan's lease.
 * - KUBE: the cluster answered with an error (kubeErrorToKwave).
 * - LEASE_LOST: a write only the lease's holder may make was not sent: the lease was lost.
 * - PLAN_*: an invalid plan file. These are not thrown: loading a plan returns every one of its
 *   errors at once (plan/load.ts), each a KwaveErrorInfo with its place.
 *
 * A halted or interrupted rollout is not an error: it is the run's result (phase and exit code).
 */
export type KwaveErrorCode =
  | 'FIXTURE'
  | 'USAGE'
  | 'REFUSED'
  | 'LOCKED'
  | 'KUBE'
  | 'LEASE_LOST'
  /** The file cannot be read as text: missing, not a file, no permission, not UTF-8. */
  | 'PLAN_UNREADABLE'
  /** Over 1 MiB, refused before it is parsed. */
  | 'PLAN_TOO_LARGE'
  /** Empty, or only comments. */
  | 'PLAN_EMPTY'
  /** Not the YAML a plan may be: a syntax error, a key twice, several documents, tags, alias bombs. */
  | 'PLAN_YAML'
  /** A required field, or one of a required choice of fields, is absent. */
  | 'PLAN_MISSING_FIELD'
  /** A field the plan's schema does not have (a typo, most often). */
  | 'PLAN_UNKNOWN_FIELD'
  /** Fields that exclude each other are both present. */
  | 'PLAN_CONFLICT'
  /** A list item or a name that must be unique appears twice. */
  | 'PLAN_DUPLICATE'
  /** A value of the wrong type, form or range, or one that cannot work with the rest of the plan. */
  | 'PLAN_INVALID_VALUE';

/** The codes of an invalid plan. */
export type PlanErrorCode = Extract<KwaveErrorCode, `PLAN_${string}`>;

/**
 * Where in a file (a plan, a fixture) an error points. Lines and columns are 1-based; both are 0
 * when the error has no place in the text (an unreadable file).
 */
export interface SourcePos {
  file: string;
  line: number;
  col: number;
  /** Dotted path of the offending value, e.g. `spec.strategy.maxUnavailable`; '' for the whole document. */
  path: string;
}

/** The shape of every error kwave reports, thrown (KwaveError) or returned in a list (a plan's errors). */
export interface KwaveErrorInfo {
  code: KwaveErrorCode;
  message: string;
  pos?: SourcePos;
}

/** An expected failure with a code and an exit code; anything else thrown is a bug. */
export class KwaveError extends Error implements KwaveErrorInfo {
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
