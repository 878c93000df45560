// Plan text → YAML document → plain JS value, refusing what a plan never needs and an attacker
// might use: duplicate keys (which would silently drop a value), custom tags, several documents,
// aliases that expand into huge values (an "alias bomb"), and more tokens than any plan holds.
import {
  isAlias,
  isCollection,
  isMap,
  isNode,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseDocument,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { keyText, pathAtOffset } from './locate.js';
import type { Segment } from './path.js';

/** A problem found in the YAML itself, at an offset in the text. */
interface YamlProblem {
  offset: number;
  path: Segment[];
  message: string;
  /** Set for a plan refused for its size; otherwise a YAML error. */
  tooLarge?: true;
}

interface YamlSource {
  doc: Document.Parsed;
  lineCounter: LineCounter;
  value: unknown;
}

export type YamlResult =
  { ok: true; source: YamlSource } | { ok: false; lineCounter: LineCounter; problems: YamlProblem[] };

/** Aliases may expand to at most this many nodes in all; plans rarely use aliases at all. */
const MAX_ALIAS_COUNT = 100;

/**
 * The plans in plans/ hold 80–150 YAML tokens (keys, values and indicators such as `-` and `:`);
 * a plan of more than this is refused before it is parsed, so that no plan up to the 1 MiB cap
 * costs more than a bounded parse (the parse of 1 MiB of short keys alone takes about a second).
 */
export const MAX_PLAN_TOKENS = 10_000;

/** Lexer markers that stand for no text of their own: a document's start, a flow's end, a scalar's start. */
const ZERO_WIDTH = new Set(['\x02', '\x18', '\x1f']);

/** The offset of the first token past MAX_PLAN_TOKENS, counting neither spaces, line breaks nor comments; undefined when within. */
export function pastTokenCap(text: string): number | undefined {
  let count = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (ZERO_WIDTH.has(token)) continue;
    const c = token.charCodeAt(0);
    // A space or tab run, a line break, a comment: no token of the plan.
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x23 && ++count > MAX_PLAN_TOKENS) return offset;
    offset += token.length;
  }
  return undefined;
}

/** Plans nest about 8 levels deep; far deeper nesting is refused before anything walks it. */
const MAX_DEPTH = 64;

const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`));

/** A collection the walk is inside, and which of its children (for a mapping: key or value) it is at. */
interface Frame {
  node: YAMLMap | YAMLSeq;
  map: boolean;
  at: number;
  /** In a mapping: at the pair's key (true) or its value. */
  key: boolean;
}

/**
 * Calls `visit` for every node under `root`, keys included, in text order, with its path and
 * whether it is a mapping's key. Aliases are visited, not followed. Iterative, with one frame per
 * collection and the path read off the frames only when `visit` asks for it: a walk that built a
 * path per node, or delegated through a generator per level, would cost the depth for every node
 * of a deeply nested plan.
 */
function walk(root: unknown, visit: (node: Node, path: () => Segment[], isKey: boolean) => void): void {
  const frames: Frame[] = [];
  const path = () => frames.map((f) => (f.map ? keyText((f.node.items[f.at] as Pair).key) : f.at));
  const enter = (node: unknown, isKey: boolean) => {
    if (!isNode(node)) return;
    visit(node, path, isKey);
    if (isMap(node) || isSeq(node)) frames.push({ node, map: isMap(node), at: -1, key: false });
  };
  enter(root, false);
  while (frames.length > 0) {
    const f = frames[frames.length - 1] as Frame;
    if (f.map && f.key) f.key = false;
    else {
      f.at++;
      f.key = f.map;
    }
    if (f.at >= f.node.items.length) {
      frames.pop();
      continue;
    }
    const item = f.node.items[f.at];
    if (!f.map) enter(item, false);
    else enter(f.key ? (item as Pair).key : (item as Pair).value, f.key);
  }
}

/** The first node nested deeper than MAX_DEPTH (iteratively: a recursive walk would overflow the stack first). */
function tooDeep(root: unknown): Node | undefined {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth >= MAX_DEPTH) return node;
    for (const item of node.items) stack.push([isMap(node) ? (item as { value: unknown }).value : item, depth + 1]);
  }
  return undefined;
}

const DEPTH_MESSAGE = `expected values nested at most ${MAX_DEPTH} levels deep, found deeper nesting`;

/**
 * The pairs of a mapping whose scalar key repeats an earlier one, each with the first. The YAML
 * parser's own check (`uniqueKeys`) compares every key with every earlier one, quadratic in a
 * wide mapping; this one keeps the keys seen in a Map. Keys are equal as the parser's check has
 * it: the same scalar value.
 */
function repeatedKeys(map: YAMLMap): [Pair, Pair][] {
  const repeats: [Pair, Pair][] = [];
  const seen = new Map<unknown, Pair>();
  for (const pair of map.items as Pair[]) {
    if (!isScalar(pair.key)) continue;
    const first = seen.get(pair.key.value);
    if (first) repeats.push([pair, first]);
    else seen.set(pair.key.value, pair);
  }
  return repeats;
}

/** Where the tag of a node is written: the "!" token just before the node's value. */
function tagOffset(text: string, node: Node): number {
  const start = node.range?.[0] ?? 0;
  let i = text.lastIndexOf('!', start);
  while (i > 0 && !/[\s,[{]/.test(text[i - 1] as string)) i--;
  return Math.max(i, 0);
}

function yamlErrorMessage(code: string, message: string): string {
  // The parser quotes the token it met whole: a hostile plan's long key would make a long message.
  const short = (message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message).replace(
    /"([^"]{60})[^"]+"/g,
    '"$1…"',
  );
  switch (code) {
    case 'MULTIPLE_DOCS':
      return 'expected one YAML document, found several (a plan file holds one plan; remove the "---" separator)';
    case 'TAB_AS_INDENT':
      return 'expected spaces for indentation, found a tab';
    case 'BLOCK_AS_IMPLICIT_KEY':
      return 'expected one "key: value" per line, found a second ": " in a value (quote the value if it holds ": ")';
    case 'MISSING_CHAR': {
      const quote = /Missing closing (["'])quote/.exec(short)?.[1];
      if (quote) return `expected a closing ${quote} to end the quoted string, found none`;
      return `expected valid YAML, found a syntax error: ${short}`;
    }
    default:
      return `expected valid YAML, found a syntax error: ${short}`;
  }
}

/** Parses plan text; positions stay available through `lineCounter` and the document's nodes. */
export function parseYaml(text: string): YamlResult {
  const lineCounter = new LineCounter();
  const past = pastTokenCap(text);
  if (past !== undefined) {
    // Line starts up to the token, for its line and column (the parse that records them is skipped).
    lineCounter.addNewLine(0);
    for (let i = text.indexOf('\n'); i !== -1 && i < past; i = text.indexOf('\n', i + 1)) lineCounter.addNewLine(i + 1);
    const cap = MAX_PLAN_TOKENS.toLocaleString('en-US');
    const message = `expected a plan of at most ${cap} YAML tokens (keys, values and indicators such as "-" and ":"), found more: token ${(MAX_PLAN_TOKENS + 1).toLocaleString('en-US')} is here`;
    return { ok: false, lineCounter, problems: [{ offset: past, path: [], message, tooLarge: true }] };
  }
  const doc = parseDocument(text, { lineCounter, uniqueKeys: false, prettyErrors: false });
  const problems: YamlProblem[] = [];

  for (const err of doc.errors) {
    const offset = err.pos[0];
    // The YAML parser recurses per nesting level: runaway nesting ends it with a stack overflow.
    if (/maximum call stack/i.test(err.message)) {
      return { ok: false, lineCounter, problems: [{ offset, path: [], message: DEPTH_MESSAGE }] };
    }
    const path = pathAtOffset(doc, offset);
    problems.push({ offset, path, message: yamlErrorMessage(err.code, err.message) });
  }

  const deep = tooDeep(doc.contents);
  if (deep)
    return { ok: false, lineCounter, problems: [{ offset: deep.range?.[0] ?? 0, path: [], message: DEPTH_MESSAGE }] };

  walk(doc.contents, (node, path, isKey) => {
    if (isCollection(node) && isKey) {
      problems.push({
        offset: node.range?.[0] ?? 0,
        path: path().slice(0, -1),
        message: 'expected a plain key, found a list or mapping used as a key',
      });
      return;
    }
    if (isMap(node)) {
      for (const [pair, first] of repeatedKeys(node)) {
        const key = keyText(pair.key);
        const firstAt = isNode(first.key) && first.key.range ? first.key.range[0] : undefined;
        const firstLine = firstAt === undefined ? '' : ` (first at line ${lineCounter.linePos(firstAt).line})`;
        problems.push({
          offset: isNode(pair.key) && pair.key.range ? pair.key.range[0] : (node.range?.[0] ?? 0),
          path: [...path(), key],
          message: `expected each key once in a mapping, found ${JSON.stringify(key)} again${firstLine}`,
        });
      }
    }
    if (node.tag !== undefined && !CORE_TAGS.has(node.tag)) {
      problems.push({
        offset: tagOffset(text, node),
        path: path(),
        message: `expected plain YAML values, found the tag ${node.tag.replace('tag:yaml.org,2002:', '!!')} (plans use no custom tags)`,
      });
    }
  });
  if (problems.length > 0) return { ok: false, lineCounter, problems };

  try {
    const value: unknown = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    return { ok: true, source: { doc, lineCounter, value } };
  } catch (err) {
    // toJS throws only for runaway aliases (or an alias it cannot resolve): point at the first alias.
    let node: Node | undefined;
    let path: Segment[] = [];
    walk(doc.contents, (n, pathOfN) => {
      if (node || !isAlias(n)) return;
      node = n;
      path = pathOfN();
    });
    const reason = err instanceof Error ? err.message : String(err);
    const message = /excessive alias count/i.test(reason)
      ? `expected aliases that expand to at most ${MAX_ALIAS_COUNT} nodes, found aliases that expand further (an alias bomb?)`
      : // The reason quotes the alias, which a hostile file can make megabytes long.
        `expected aliases that resolve, found: ${reason.length > 200 ? `${reason.slice(0, 200)}…` : reason}`;
    return { ok: false, lineCounter, problems: [{ offset: node?.range?.[0] ?? 0, path, message }] };
  }
}
