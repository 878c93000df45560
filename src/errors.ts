/** Exit codes of DESIGN.md, by name. */
export const ExitCode = {
  OK: 0,
  INTERNAL: 1,
  BAD_INPUT: 2,
  HALTED: 3,
  INTERRUPTED: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type KwaveErrorCode =
  | 'PLAN_READ'
  | 'PLAN_YAML'
  | 'PLAN_SCHEMA'
  | 'PLAN_SEMANTIC'
  | 'FIXTURE'
  | 'USAGE'
  | 'NOT_BUILT'
  | 'REFUSED'
  | 'LOCKED'
  | 'GATE_FAILED'
  | 'HALTED'
  | 'INTERRUPTED'
  | 'KUBE';

/** Where in a file an error points. Lines and columns are 1-based. */
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
