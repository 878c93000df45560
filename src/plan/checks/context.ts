// What every semantic check gets: a way to ask whether a part of the plan passed the schema,
// and a list to add issues to.
import { quoted } from '../describe.js';
import { formatPlanDuration, MAX_DURATION_MS, parseDuration } from '../duration.js';
import type { JsonPath } from '../path.js';
import type { PlanErrorCode } from '../../errors.js';
import type { Anchor, Issue } from '../planError.js';

/** A path as one string; index segments compare as text, as ajv gives them. */
function pathKey(path: JsonPath): string {
  return JSON.stringify(path.map(String));
}

export class CheckContext {
  readonly issues: Issue[] = [];

  /** The paths the schema rejected, as keys. */
  private readonly bad = new Set<string>();
  /** Every path that is a rejected path or lies above one, as keys. */
  private readonly aboveBad = new Set<string>();

  /**
   * @param badValues paths of values the schema rejected. Kept as sets of keys so that each
   * question costs the depth of its path, not the number of errors (a hostile plan has thousands).
   */
  constructor(badValues: readonly JsonPath[]) {
    for (const path of badValues) {
      this.bad.add(pathKey(path));
      for (let n = 0; n <= path.length; n++) this.aboveBad.add(pathKey(path.slice(0, n)));
    }
  }

  /**
   * True when the schema accepted the value at `path` and everything above it, so it has the
   * type the schema promises (what lies inside may still be wrong). Enough for a check that reads
   * the value itself: a string, or the keys of a mapping.
   */
  accepted(path: JsonPath): boolean {
    for (let n = 0; n <= path.length; n++) if (this.bad.has(pathKey(path.slice(0, n)))) return false;
    return true;
  }

  /**
   * True when the schema accepted the value at `path` and everything inside it. Needed by a check
   * that reads the whole value (the order of all wave targets), lest it repeat the schema's
   * complaint or misread a value of the wrong type.
   */
  wholly(path: JsonPath): boolean {
    return this.accepted(path) && !this.aboveBad.has(pathKey(path));
  }

  /** Most checks find a value that cannot work (PLAN_INVALID_VALUE), pointed at where it is written. */
  add(
    path: JsonPath,
    message: string,
    {
      code = 'PLAN_INVALID_VALUE',
      anchor = 'value',
      offset,
    }: { code?: PlanErrorCode; anchor?: Anchor; offset?: number } = {},
  ): void {
    this.issues.push({ code, path, message, anchor, ...(offset === undefined ? {} : { offset }) });
  }

  /** Checks a duration the schema has seen the shape of: it must parse, and fit the bounds. */
  duration(path: JsonPath, text: string | undefined, opts: { positive?: boolean } = {}): void {
    if (text === undefined || !this.accepted(path)) return;
    const ms = parseDuration(text);
    if (ms === undefined) this.add(path, `expected a duration like "30s", "5m" or "1h30m", found ${quoted(text)}`);
    else if (ms > MAX_DURATION_MS)
      this.add(path, `expected a duration of at most ${formatPlanDuration(MAX_DURATION_MS)}, found ${quoted(text)}`);
    else if (opts.positive && ms === 0) this.add(path, `expected a duration above zero, found ${quoted(text)}`);
  }

  /** Checks an http(s) URL: it must parse and carry no credentials (secrets never go in a plan). */
  url(path: JsonPath, text: string | undefined): void {
    if (text === undefined || !this.accepted(path)) return;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      this.add(path, `expected an http:// or https:// URL, found ${quoted(text)}`);
      return;
    }
    if (url.username || url.password) {
      this.add(path, 'expected a URL without a user or password in it, found credentials (secrets never go in a plan)');
    }
  }
}
