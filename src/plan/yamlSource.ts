// Plan text → YAML document → plain JS value, refusing what a plan never needs and an attacker
// might use: duplicate keys (which would silently drop a value), custom tags, several documents,
// and aliases that expand into huge values (an "alias bomb").
import {
  isAlias,
  isCollection,
  isMap,
  isNode,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';
import { keyText, pathAtOffset } from './locate.js';
import type { Segment } from './path.js';

/** A problem found in the YAML itself, at an offset in the text. */
interface YamlProblem {
  offset: number;
  path: Segment[];
  message: string;
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

/** Plans nest about 8 levels deep; far deeper nesting is refused before anything walks it. */
const MAX_DEPTH = 64;

const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`));

/** A node's path as a chain to its parent's: built into a list only for the few nodes a problem names. */
interface PathLink {
  up: PathLink | undefined;
  seg: Segment;
}

function pathOf(link: PathLink | undefined): Segment[] {
  const path: Segment[] = [];
  for (let l = link; l; l = l.up) path.push(l.seg);
  return path.reverse();
}

/**
 * Calls `visit` for every node under `root`, keys included, in text order, with its path and
 * whether it is a mapping's key. Aliases are visited, not followed. Iterative, and without a
 * path list per node: a walk that copied the path, or delegated through a generator per level,
 * would cost the depth for every node of a deeply nested plan.
 */
function walk(root: unknown, visit: (node: Node, path: () => Segment[], isKey: boolean) => void): void {
  const stack: [unknown, PathLink | undefined, boolean][] = [[root, undefined, false]];
  while (stack.length > 0) {
    const [node, link, isKey] = stack.pop()!;
    if (!isNode(node)) continue;
    visit(node, () => pathOf(link), isKey);
    if (isMap(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) {
        const pair = node.items[i] as Pair;
        const at: PathLink = { up: link, seg: keyText(pair.key) };
        stack.push([pair.value, at, false]);
        if (isNode(pair.key)) stack.push([pair.key, at, true]);
      }
    } else if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push([node.items[i], { up: link, seg: i }, false]);
    }
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
  const seen = new Map<unknown, Pair>();
  const repeats: [Pair, Pair][] = [];
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
