// The one shape every plan problem takes, from a missing file to a CEL typo: an error as kwave
// reports every error (errors.ts), with a plan code and always a place.
import type { KwaveErrorInfo, PlanErrorCode, SourcePos } from '../errors.js';
import type { JsonPath } from './path.js';

/**
 * A problem in a plan file. `pos.line` and `pos.col` are 0 when the problem has no place in the
 * text (an unreadable file); `pos.path` is dotted (`spec.gates[0].name`), '' for the whole
 * document. `message` reads "expected X, found Y".
 */
export interface PlanError extends KwaveErrorInfo {
  code: PlanErrorCode;
  pos: SourcePos;
}

/** Where an issue found before positions are known should point. */
export type Anchor =
  /** the value at the path (the usual case) */
  | 'value'
  /** the key of the last segment: unknown fields, fields that clash with another */
  | 'key'
  /** the key of the mapping that should have held the path's last key (`spec:` for a missing `spec.strategy`): missing fields */
  | 'parent';

/** A problem found on the JS value, located later in the YAML text. */
export interface Issue {
  code: PlanErrorCode;
  path: JsonPath;
  message: string;
  anchor: Anchor;
  /** For a string value: the character inside it the problem starts at (a CEL syntax error). */
  offset?: number;
}
