// The JSON Schema file itself: documented, closed, in step with the normalizer's defaults, and
// the example plans valid against the whole loader.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PLAN_DEFAULTS } from '../../../src/plan/defaults.js';
import { loadPlanFile } from '../../../src/plan/load.js';
import { PLAN_SCHEMA_URL, planValidator } from '../../../src/plan/schema.js';

type Node = Record<string, unknown>;
const schema = JSON.parse(readFileSync(PLAN_SCHEMA_URL, 'utf8')) as Node;
const defs = schema.$defs as Record<string, Node>;

/** Follows a local $ref. */
const deref = (n: Node): Node => (typeof n.$ref === 'string' ? (defs[n.$ref.replace('#/$defs/', '')] as Node) : n);

/** Every subschema, with a JSON-pointer-ish name for messages. */
function* subschemas(node: unknown, at: string): Generator<[Node, string]> {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) yield* subschemas(n, `${at}/${i}`);
    return;
  }
  yield [node as Node, at];
  for (const [k, v] of Object.entries(node)) {
    if (k === 'examples' || k === 'default' || k === 'enum' || k === 'const') continue;
    yield* subschemas(v, `${at}/${k}`);
  }
}

describe('plan schema', () => {
  test('is draft 2020-12 and compiles in strict mode', () => {
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.equal(typeof planValidator(), 'function');
  });

  test('every property has a description', () => {
    for (const [node, at] of subschemas(schema, '#')) {
      for (const [name, prop] of Object.entries((node.properties ?? {}) as Record<string, Node>)) {
        assert.equal(typeof prop.description, 'string', `${at}/properties/${name} has no description`);
      }
    }
  });

  test('every object with declared properties is closed (additionalProperties: false)', () => {
    for (const [node, at] of subschemas(schema, '#')) {
      if (node.properties) assert.equal(node.additionalProperties, false, `${at} is open`);
    }
  });

  test('every pattern says in words what it wants (x-expected)', () => {
    for (const [node, at] of subschemas(schema, '#')) {
      if (node.pattern) assert.equal(typeof node['x-expected'], 'string', `${at} has a pattern but no x-expected`);
    }
  });

  test('the default annotations are the normalizer defaults', () => {
    const spec = (schema.properties as Record<string, Node>).spec as Node;
    const props = (n: Node) => deref(n).properties as Record<string, Node>;
    const specProps = props(spec);
    const defaultsOf = (n: Node) =>
      Object.fromEntries(Object.entries(props(n)).flatMap(([k, v]) => ('default' in v ? [[k, v.default]] : [])));
    assert.deepEqual(defaultsOf(specProps.readinessGate as Node), PLAN_DEFAULTS.readinessGate);
    assert.deepEqual(defaultsOf(specProps.strategy as Node), PLAN_DEFAULTS.strategy);
    assert.deepEqual(defaultsOf(specProps.failurePolicy as Node), PLAN_DEFAULTS.failurePolicy);
    assert.deepEqual(defaultsOf(specProps.window as Node), PLAN_DEFAULTS.window);
    assert.deepEqual(defaultsOf(defs.gate as Node), PLAN_DEFAULTS.gate);
    assert.deepEqual(defaultsOf(defs.prometheusGate as Node), PLAN_DEFAULTS.prometheus);
    assert.deepEqual(defaultsOf(defs.webhookGate as Node), PLAN_DEFAULTS.webhook);
    assert.deepEqual(defaultsOf(defs.notifyTarget as Node), PLAN_DEFAULTS.notify);
  });
});

describe('example plans', () => {
  const dir = fileURLToPath(new URL('../../../plans/', import.meta.url));
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

  test('the four plans of the issue are there', () => {
    for (const f of ['demo.yaml', 'canary-prometheus.yaml', 'fleet-nightly.yaml', 'multi-container.yaml'])
      assert.ok(files.includes(f), f);
  });

  for (const f of files) {
    test(`${f} is valid and points editors at the schema`, async () => {
      const text = readFileSync(dir + f, 'utf8');
      assert.equal(text.split('\n')[0], '# yaml-language-server: $schema=../schemas/plan.schema.json');
      const result = await loadPlanFile(dir + f);
      assert.ok(result.ok, JSON.stringify(!result.ok && result.errors, null, 1));
    });
  }

  test('demo.yaml fits the simulated default world', async () => {
    const result = await loadPlanFile(dir + 'demo.yaml');
    assert.ok(result.ok);
    const { plan } = result;
    assert.deepEqual(plan.target, { namespaces: ['default'], selector: { matchLabels: { app: 'demo' } } });
    assert.deepEqual(plan.update.containers, [{ name: 'nginx', image: 'nginx:1.25.3' }]);
    assert.equal(plan.readinessGate.conditionType, 'kwave.dev/in-place-ready');
  });
});
