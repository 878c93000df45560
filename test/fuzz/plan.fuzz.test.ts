// Hostile plan files: random YAML, random mutations of the valid plans in plans/ (of the text and
// of the structure), alias bombs, deep nesting, huge files. The loader must answer every one with
// errors that name a place and say what was expected (or accept it), never throw, and refuse huge
// or runaway input before it spends memory on it. A sample goes through the real `kwave validate`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { loadPlanFile, loadPlanText, MAX_PLAN_BYTES } from '../../src/plan/load.js';
import { load } from './planCheck.js';
import { injection, longFuzz, oddString, params, runs } from './runs.js';
import { runKwave } from './cli.js';

const PLANS = join(import.meta.dirname, '../../plans');
const planFiles = (await readdir(PLANS)).filter((f) => f.endsWith('.yaml')).sort();
const plans = await Promise.all(
  planFiles.map(async (f) => ({ file: f, text: await readFile(join(PLANS, f), 'utf8') })),
);

const YAML_TOKENS = [
  'apiVersion: kwave.dev/v1alpha1',
  'kind: RolloutPlan',
  'metadata:',
  'name: web',
  'spec:',
  'target:',
  'namespace: web',
  'selector:',
  'matchLabels:',
  'app: web',
  'update:',
  'containers:',
  '- name: nginx',
  'image: nginx:1.25.3',
  'strategy:',
  'waves: [1, "50%"]',
  'gates:',
  'prometheus:',
  'webhook:',
  'auth:',
  '\n',
  '\n  ',
  '  ',
  '- ',
  ': ',
  '[',
  ']',
  '{',
  '}',
  ',',
  '&a ',
  '*a',
  '&b ',
  '*b',
  '!!str ',
  '!!binary ',
  '!custom ',
  '---\n',
  '...\n',
  '"',
  "'",
  '#',
  '|\n',
  '>\n',
  '? ',
  '\t',
  '%YAML 1.2\n',
  '<<: *a',
  '~',
  'null',
  '1e309',
  '-0',
  '0x1F',
  '.inf',
  'yes',
  'on',
  '2026-01-01',
  '"\\u0000"',
  '\ufeff',
  '\u2028',
];

const randomYaml = fc
  .array(fc.oneof(fc.constantFrom(...YAML_TOKENS), oddString), { maxLength: 60 })
  .map((parts) => parts.join(''));

function paths(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...prefix, i])));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...prefix, k]));
  return out;
}

/** A structural change at one path of a parsed plan. */
const structuralMutation = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom('set', 'delete', 'rename', 'add-key', 'wrap', 'duplicate'),
  value: fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    oddString,
    injection,
    fc.constantFrom(0, -1, 1e308, 2 ** 53 + 1, '0%', '101%', '1.5', '', '10m', '720h1s'),
  ),
  key: fc.oneof(
    oddString,
    injection,
    fc.constantFrom('auth', 'bearerToken', 'token', 'password', 'url', 'image', 'waves', 'waveSize'),
  ),
});

function mutateStructure(doc: unknown, m: { at: number; kind: string; value: unknown; key: string }): unknown {
  const all = paths(doc);
  const path = all[m.at % all.length]!;
  if (path.length === 0) return m.kind === 'set' ? m.value : m.kind === 'wrap' ? [doc] : doc;
  let parent = doc as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) parent = parent[seg] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  switch (m.kind) {
    case 'set':
      parent[last] = m.value;
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
      break;
    case 'rename':
      if (!Array.isArray(parent)) {
        parent[m.key] = parent[last];
        delete parent[last];
      }
      break;
    case 'add-key':
      if (parent[last] !== null && typeof parent[last] === 'object' && !Array.isArray(parent[last]))
        (parent[last] as Record<string, unknown>)[m.key] = m.value;
      break;
    case 'wrap':
      parent[last] = [parent[last]];
      break;
    case 'duplicate':
      if (Array.isArray(parent)) parent.push(structuredClone(parent[last]));
      break;
  }
  return doc;
}

/** A change of the text: delete a span, insert a token, duplicate or swap lines. */
const textMutation = fc.record({
  at: fc.nat(),
  len: fc.nat({ max: 40 }),
  kind: fc.constantFrom('delete', 'insert', 'dup-line', 'swap-lines', 'indent'),
  token: fc.oneof(fc.constantFrom(...YAML_TOKENS), oddString, injection),
});

function mutateText(text: string, m: { at: number; len: number; kind: string; token: string }): string {
  const i = m.at % (text.length + 1);
  const lines = text.split('\n');
  const l = m.at % lines.length;
  switch (m.kind) {
    case 'delete':
      return text.slice(0, i) + text.slice(i + m.len);
    case 'insert':
      return text.slice(0, i) + m.token + text.slice(i);
    case 'dup-line':
      lines.splice(l, 0, lines[l]!);
      return lines.join('\n');
    case 'swap-lines': {
      const k = (l + 1 + m.len) % lines.length;
      [lines[l], lines[k]] = [lines[k]!, lines[l]!];
      return lines.join('\n');
    }
    default:
      lines[l] = ' '.repeat(m.len % 5) + lines[l];
      return lines.join('\n');
  }
}

/** width^depth leaves from a file of a few hundred bytes. */
function aliasBomb(width: number, depth: number, where: 'top' | 'spec'): string {
  const level = (i: number) =>
    `l${i}: &l${i} [${Array.from({ length: width }, () => (i === 0 ? '"lol"' : `*l${i - 1}`)).join(', ')}]`;
  const anchors = Array.from({ length: depth }, (_, i) => level(i));
  if (where === 'top') return anchors.join('\n') + '\n';
  return `apiVersion: kwave.dev/v1alpha1\nkind: RolloutPlan\nmetadata: {name: bomb}\nx-anchors:\n${anchors.map((a) => `  ${a}`).join('\n')}\nspec:\n  target: {namespace: web, selector: {matchLabels: {app: *l${depth - 1}}}}\n`;
}

describe('hostile plan files', () => {
  test('the plans in plans/ are valid (the mutations start from valid plans)', () => {
    assert.ok(plans.length >= 3);
    for (const p of plans) assert.ok(loadPlanText(p.text, p.file).ok, p.file);
  });

  test('random YAML gets errors with places, or loads', (t) => {
    fc.assert(
      fc.property(randomYaml, (text) => void load(text)),
      params(t, 200),
    );
  });

  test('random structural mutations of the valid plans', (t) => {
    fc.assert(
      fc.property(
        fc.constantFrom(...plans),
        fc.array(structuralMutation, { minLength: 1, maxLength: 3 }),
        (plan, ms) => {
          let doc: unknown = parse(plan.text);
          for (const m of ms) doc = mutateStructure(doc, m);
          const text = stringify(doc, { aliasDuplicateObjects: false });
          const r = load(text);
          // A token written into the plan is refused wherever it is put; `token` or `bearerToken` as
          // the key of a selector label (matchLabels: {bearerToken: web}) is a label, not a
          // credential (seed 1152805815 renamed a label key to bearerToken).
          const labelKeys = r.ok ? JSON.stringify(r.plan.target.selector) : '';
          if (/bearerToken"?:\s|\btoken"?:\s/i.test(text) && r.ok && !/"(bearer)?token"/i.test(labelKeys))
            assert.fail(`a plan with an inline token loaded:\n${text}`);
        },
      ),
      params(t, 150),
    );
  });

  test('random text mutations of the valid plans', (t) => {
    fc.assert(
      fc.property(fc.constantFrom(...plans), fc.array(textMutation, { minLength: 1, maxLength: 4 }), (plan, ms) => {
        let text = plan.text;
        for (const m of ms) text = mutateText(text, m);
        load(text);
      }),
      params(t, 150),
    );
  });

  test('alias bombs are refused at the first alias, whatever their shape', (t) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 12 }),
        fc.integer({ min: 5, max: 12 }),
        fc.constantFrom('top', 'spec') as fc.Arbitrary<'top' | 'spec'>,
        (width, depth, where) => {
          const r = load(aliasBomb(width, depth, where));
          assert.equal(r.ok, false);
          if (!r.ok && where === 'top') assert.match(r.errors[0]!.message, /alias/);
        },
      ),
      params(t, 15),
    );
  });

  test('deep nesting is refused with a message about nesting, not a stack overflow', (t) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 65, max: 20_000 }),
        fc.constantFrom('[', '{a: ', '- ', 'a:\n'),
        fc.boolean(),
        (depth, open, inSpec) => {
          const body =
            open === '- '
              ? Array.from({ length: Math.min(depth, 2000) }, (_, i) => ' '.repeat(i * 2) + '- x').join('\n')
              : open === 'a:\n'
                ? Array.from({ length: Math.min(depth, 2000) }, (_, i) => ' '.repeat(i) + 'a:').join('\n')
                : open.repeat(depth);
          const text = inSpec
            ? `apiVersion: kwave.dev/v1alpha1\nkind: RolloutPlan\nmetadata: {name: x}\nspec:\n  target: ${body.replace(/\n/g, '\n   ')}`
            : body;
          const r = load(text);
          assert.equal(r.ok, false);
        },
      ),
      params(t, 10),
    );
  });

  test('10 MB files and 1 MB lines: refused by size before parsing, or parsed once', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'kwave-fuzz-'));
    try {
      const big = 'a'.repeat(10 * 1024 * 1024);
      const r = loadPlanText(big, 'plan.yaml');
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.errors[0]!.message, /at most 1 MiB/);
      await writeFile(
        join(dir, 'big.yaml'),
        `apiVersion: kwave.dev/v1alpha1\nkind: RolloutPlan\nmetadata:\n  name: "${'x'.repeat(10 * 1024 * 1024)}"\n`,
      );
      const f = await loadPlanFile(join(dir, 'big.yaml'));
      assert.equal(f.ok, false);
      if (!f.ok) assert.match(f.errors[0]!.message, /at most 1 MiB/);
      const line = load(
        `apiVersion: kwave.dev/v1alpha1\nkind: RolloutPlan\nmetadata:\n  name: "${'x'.repeat(MAX_PLAN_BYTES - 200)}"\n`,
      );
      assert.equal(line.ok, false);
      t.diagnostic('fuzz runs: 3');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a sample through the real `kwave validate` and `kwave plan`: exit 2, no stack trace', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'kwave-fuzz-cli-'));
    try {
      const sample = fc.sample(
        fc.oneof(
          randomYaml,
          fc
            .tuple(fc.constantFrom(...plans), fc.array(textMutation, { minLength: 1, maxLength: 3 }))
            .map(([p, ms]) => ms.reduce(mutateText, p.text)),
          fc
            .tuple(fc.constantFrom(...plans), fc.array(structuralMutation, { minLength: 1, maxLength: 3 }))
            .map(([p, ms]) => stringify(ms.reduce(mutateStructure, parse(p.text) as unknown))),
        ),
        { numRuns: runs(12), seed: 42 },
      );
      const files: string[] = [];
      for (const [i, text] of [
        ...sample,
        aliasBomb(10, 10, 'spec'),
        '['.repeat(50_000),
        'a'.repeat(2 * 1024 * 1024),
      ].entries()) {
        const f = join(dir, `case-${i}.yaml`);
        await writeFile(f, text);
        files.push(f);
      }
      t.diagnostic(`fuzz runs: ${files.length} files through kwave validate`);
      // Each spawn costs seconds on a loaded machine: one `validate` of every file, more in the long mode.
      for (const output of longFuzz ? ['text', 'json'] : ['json']) {
        const r = await runKwave(['validate', '-o', output, ...files]);
        assert.ok(
          r.code === 2 || (r.code === 0 && !r.stdout.includes('"valid":false')),
          `validate exit ${r.code}\n${r.stderr.slice(0, 2000)}`,
        );
        assert.doesNotMatch(
          r.stderr + r.stdout,
          /internal error|\n\s+at .+:\d+:\d+\)?\n|TypeError|RangeError/,
          (r.stderr + r.stdout).slice(0, 3000),
        );
        if (output === 'json') for (const l of r.stdout.split('\n').filter(Boolean)) JSON.parse(l);
      }
      // `plan` and `run` load the plan the same way, before touching a cluster.
      for (const f of longFuzz ? files : files.slice(0, 1)) {
        for (const cmd of longFuzz ? ['plan', 'run'] : ['plan']) {
          const r = await runKwave([cmd, f, '--kubeconfig', join(dir, 'none'), '--metrics-address', 'off']);
          if (r.code === 2)
            assert.doesNotMatch(r.stderr, /internal error|\n\s+at .+:\d+:\d+\)?\n/, r.stderr.slice(0, 2000));
          else assert.fail(`kwave ${cmd} ${f}: exit ${r.code}\n${r.stderr.slice(0, 2000)}`);
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
