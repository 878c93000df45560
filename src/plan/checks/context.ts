// What every semantic check gets: a way to ask whether a part of the plan passed the schema,
// and a list to add issues to.
import { quoted } from '../describe.js';
import { formatPlanDuration, MAX_DURATION_MS, parseDuration } from '../duration.js';
import type { JsonPath } from '../path.js';
import type { PlanErrorCode } from '../../errors.js';
import type { Anchor, Issue } from '../planError.js';

/**
 * The paths the schema rejected, as a tree of their segments: a node for every path that is a
 * rejected one or lies above one, `bad` on the rejected ones. Each question walks its own path
 * once, whatever the number of errors (a hostile plan has tens of thousands). Index segments
 * compare as text, as ajv gives them.
 */
interface PathTree {
  bad: boolean;
  /** Made for the first path below: most nodes of a hostile plan's tree are leaves. */
  below?: Map<string, PathTree>;
}

const newTree = (): PathTree => ({ bad: false });

export class CheckContext {
  readonly issues: Issue[] = [];

  private readonly rejected = newTree();

  /** @param badValues paths of values the schema rejected */
  constructor(badValues: readonly JsonPath[]) {
    for (const path of badValues) {
      let node = this.rejected;
      for (const seg of path) {
        const key = String(seg);
        node.below ??= new Map();
        let next = node.below.get(key);
        if (!next) node.below.set(key, (next = newTree()));
        node = next;
      }
      node.bad = true;
    }
  }

  /** The tree's node at `path`, or undefined when no rejected path lies at or below it; false when one lies above. */
  private nodeAt(path: JsonPath): PathTree | undefined | false {
    let node = this.rejected;
    for (const seg of path) {
      if (node.bad) return false;
      const next = node.below?.get(String(seg));
      if (!next) return undefined;
      node = next;
    }
    return node.bad ? false : node;
  }

  /**
   * True when the schema accepted the value at `path` and everything above it, so it has the
   * type the schema promises (what lies inside may still be wrong). Enough for a check that reads
   * the value itself: a string, or the keys of a mapping.
   */
  accepted(path: JsonPath): boolean {
    return this.nodeAt(path) !== false;
  }

  /**
   * True when the schema accepted the value at `path` and everything inside it. Needed by a check
   * that reads the whole value (the order of all wave targets), lest it repeat the schema's
   * complaint or misread a value of the wrong type.
   */
  wholly(path: JsonPath): boolean {
    return this.nodeAt(path) === undefined;
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
