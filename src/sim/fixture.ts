// The fixture: a YAML file declaring the simulated cluster's nodes and zones, its image table,
// its workloads, its timing and its faults (schemas/fixture.schema.json). Parsing is pure:
// text in, a normalised Fixture or a KwaveError pointing at file:line:col out. Without a file,
// `defaultFixture(pods)` is the default world of DESIGN.md.
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { isMap, isPair, isScalar, LineCounter, parseDocument, visit, type Document, type Node as YamlNode } from 'yaml';
import { ExitCode, KwaveError } from '../errors.js';
import type { Timing } from './clock.js';
import type { Faults } from './faults.js';
import { ImageTable, parseImageRef, type ImageDecl } from './images.js';

export const DEFAULT_GATE = 'kwave.dev/in-place-ready';

export interface FixtureNode {
  name: string;
  zone?: string;
  labels?: Record<string, string>;
  /** Images this node's registry mirror lacks: pulls of them fail here only (a mirror not yet synced). */
  missingImages?: string[];
}

export interface FixtureContainer {
  name: string;
  image: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  ports?: number[];
}

export interface FixtureWorkload {
  namespace: string;
  name: string;
  replicas: number;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  containers: FixtureContainer[];
  /** undefined: no readiness gate. */
  readinessGate?: { conditionType: string; condition: 'True' | 'False' | 'absent' };
  owner?: { kind: OwnerKind; name?: string };
  nodes?: string[];
  /** Pods (or absent): bare pods (with `owner` names only). Otherwise a real apps/v1 object owns the pods (src/sim/workloads.ts). */
  kind?: WorkloadKind;
  /** StatefulSet and DaemonSet: how their controller replaces pods on a template change. */
  updateStrategy?: 'OnDelete' | 'RollingUpdate';
}

/** A policy/v1 PodDisruptionBudget the world starts with. */
export interface FixturePdb {
  namespace: string;
  name: string;
  selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[] };
  minAvailable?: number | string;
  maxUnavailable?: number | string;
}

export type WorkloadKind = 'Pods' | 'Deployment' | 'StatefulSet' | 'DaemonSet';

export type OwnerKind = 'ReplicaSet' | 'StatefulSet' | 'DaemonSet' | 'Job';

export interface FixtureTiming {
  pullSeconds?: number;
  startSeconds?: number;
  readySeconds?: number;
  stopSeconds?: number;
  crashSeconds?: number;
  jitter?: number;
}

/** A fixture with its defaults filled in. */
export interface Fixture {
  nodes: FixtureNode[];
  images: Record<string, ImageDecl>;
  workloads: FixtureWorkload[];
  podDisruptionBudgets?: FixturePdb[];
  timing: FixtureTiming;
  timeScale?: number;
  seed?: number;
  traffic?: { requestsPerSecond?: number };
  faults?: Partial<Faults>;
}

/** The default nodes: three, one per zone. */
export const DEFAULT_NODES: readonly FixtureNode[] = Object.freeze([
  { name: 'sim-node-1', zone: 'zone-a' },
  { name: 'sim-node-2', zone: 'zone-b' },
  { name: 'sim-node-3', zone: 'zone-c' },
]);

/** The default image table: two good versions, a same-digest retag, and one image per failure mode. */
export function defaultImages(): Record<string, ImageDecl> {
  return {
    'nginx:1.14.2': {},
    'nginx:1.25.3': {},
    'nginx:1.14.2-retag': { digestOf: 'nginx:1.14.2' },
    'nginx:broken': { pull: 'fail' },
    'nginx:crash': { crash: true },
    'nginx:slow': { readyAfterSeconds: 30 },
    'nginx:errors': { errorRate: 0.5 },
  };
}

/** DESIGN.md's default world: `pods` pods demo-0… of nginx:1.14.2 in `default`, gate declared and True. */
export function defaultFixture(pods: number): Fixture {
  return {
    nodes: DEFAULT_NODES.map((n) => ({ ...n })),
    images: defaultImages(),
    workloads: [
      {
        namespace: 'default',
        name: 'demo',
        replicas: pods,
        labels: { app: 'demo' },
        containers: [{ name: 'nginx', image: 'nginx:1.14.2', ports: [80] }],
        readinessGate: { conditionType: DEFAULT_GATE, condition: 'True' },
        kind: 'Pods',
      },
    ],
    timing: {},
  };
}

// ---- parsing ----

/** The raw document as the schema allows it. */
interface RawWorkload extends Omit<FixtureWorkload, 'namespace' | 'labels' | 'readinessGate' | 'owner' | 'kind' | 'replicas'> {
  kind?: WorkloadKind;
  replicas?: number;
  namespace?: string;
  labels?: Record<string, string>;
  readinessGate?: false | { conditionType?: string; condition?: 'True' | 'False' | 'absent' };
  owner?: { kind: OwnerKind | 'None'; name?: string };
}
interface RawFixture extends Omit<Fixture, 'nodes' | 'images' | 'workloads' | 'timing' | 'podDisruptionBudgets'> {
  podDisruptionBudgets?: (Omit<FixturePdb, 'namespace'> & { namespace?: string })[];
  nodes?: FixtureNode[];
  images?: Record<string, ImageDecl>;
  workloads?: RawWorkload[];
  timing?: FixtureTiming;
}

let compiled: ReturnType<Ajv2020['compile']> | undefined;
function validator(): ReturnType<Ajv2020['compile']> {
  if (!compiled) {
    const schema = JSON.parse(readFileSync(new URL('../../schemas/fixture.schema.json', import.meta.url), 'utf8')) as object;
    compiled = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false }).compile(schema);
  }
  return compiled;
}

interface Problem {
  path: (string | number)[];
  message: string;
  /** Point at this key of the map at `path` rather than at the value. */
  key?: string;
}

/** Fixtures describe worlds by workload and replica count: anything over 4 MiB is refused unread. */
export const MAX_FIXTURE_BYTES = 4 * 1024 * 1024;

/** Aliases may expand to at most this many nodes in all (an "alias bomb" is refused). */
const MAX_ALIAS_COUNT = 100;

function tooBig(file: string, bytes: number): KwaveError {
  return new KwaveError('FIXTURE', `expected a fixture of at most 4 MiB, found ${bytes} bytes`, ExitCode.BAD_INPUT, { file, line: 1, col: 1, path: '' });
}

/** Reads and parses a fixture file; throws KwaveError (FIXTURE, exit 2) with file:line:col. */
export async function loadFixture(file: string): Promise<Fixture> {
  let text: string;
  try {
    const info = await stat(file);
    if (info.size > MAX_FIXTURE_BYTES) throw tooBig(file, info.size);
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof KwaveError) throw err;
    throw new KwaveError('FIXTURE', `cannot read fixture ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, ExitCode.BAD_INPUT);
  }
  return parseFixture(text, file);
}

/** Parses fixture text; every problem found is reported, the first one with its position. */
export function parseFixture(text: string, file = 'fixture.yaml'): Fixture {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_FIXTURE_BYTES) throw tooBig(file, bytes);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const { line, col } = lineCounter.linePos(e.pos[0]);
    throw new KwaveError('FIXTURE', `invalid YAML: ${e.message.split('\n')[0]}`, ExitCode.BAD_INPUT, { file, line, col, path: '' });
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // toJS throws only for runaway or unresolved aliases: point at the first alias.
    const at = firstAliasOffset(doc);
    const { line, col } = lineCounter.linePos(at);
    const reason = err instanceof Error ? err.message : String(err);
    const message = /excessive alias count/i.test(reason)
      ? `expected aliases that expand to at most ${MAX_ALIAS_COUNT} nodes, found aliases that expand further (an alias bomb?)`
      : // The reason quotes the alias, which a hostile file can make megabytes long.
        `expected aliases that resolve, found: ${reason.length > 200 ? `${reason.slice(0, 200)}…` : reason}`;
    throw new KwaveError('FIXTURE', message, ExitCode.BAD_INPUT, { file, line, col, path: '' });
  }
  const validate = validator();
  if (!validate(raw ?? {})) {
    throw toError(doc, lineCounter, file, problemsOf(validate.errors ?? []));
  }
  const fixture = normalise((raw ?? {}) as RawFixture);
  const problems = check(fixture, (raw ?? {}) as RawFixture);
  if (problems.length) throw toError(doc, lineCounter, file, problems);
  return fixture;
}

/** Offset of the first alias (`*name`) in the document, or 0. */
function firstAliasOffset(doc: Document): number {
  let at: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      at = node.range?.[0];
      return visit.BREAK;
    },
  });
  return at ?? 0;
}

function normalise(raw: RawFixture): Fixture {
  return {
    nodes: raw.nodes ?? DEFAULT_NODES.map((n) => ({ ...n })),
    images: raw.images ?? defaultImages(),
    workloads: (raw.workloads ?? []).map((w) => ({
      namespace: w.namespace ?? 'default',
      name: w.name,
      kind: w.kind ?? 'Pods',
      ...(w.kind === 'StatefulSet' || w.kind === 'DaemonSet' ? { updateStrategy: w.updateStrategy ?? 'RollingUpdate' } : {}),
      // A DaemonSet runs one pod on each of its nodes.
      replicas: w.kind === 'DaemonSet' ? (w.nodes ?? raw.nodes ?? DEFAULT_NODES).length : (w.replicas ?? 0),
      labels: w.labels ?? { app: w.name },
      annotations: w.annotations,
      containers: w.containers,
      readinessGate: w.readinessGate === false ? undefined : { conditionType: w.readinessGate?.conditionType ?? DEFAULT_GATE, condition: w.readinessGate?.condition ?? 'True' },
      owner: w.owner && w.owner.kind !== 'None' ? { kind: w.owner.kind, name: w.owner.name } : undefined,
      nodes: w.nodes,
    })),
    ...(raw.podDisruptionBudgets ? { podDisruptionBudgets: raw.podDisruptionBudgets.map((p) => ({ ...p, namespace: p.namespace ?? 'default' })) } : {}),
    timing: raw.timing ?? {},
    timeScale: raw.timeScale,
    seed: raw.seed,
    traffic: raw.traffic,
    faults: raw.faults,
  };
}

/** What the schema cannot say: names that must exist, be unique, or parse as images. */
function check(f: Fixture, raw: RawFixture): Problem[] {
  const problems: Problem[] = [];
  const nodeNames = new Set<string>();
  f.nodes.forEach((n, i) => {
    if (nodeNames.has(n.name)) problems.push({ path: ['nodes', i, 'name'], message: `node "${n.name}" is declared twice` });
    nodeNames.add(n.name);
    (n.missingImages ?? []).forEach((image, j) => {
      const ref = parseImageRef(image);
      if ('error' in ref) problems.push({ path: ['nodes', i, 'missingImages', j], message: `image "${image}": ${ref.error}` });
    });
  });
  if (raw.images) {
    for (const name of Object.keys(raw.images)) {
      const ref = parseImageRef(name);
      if ('error' in ref) problems.push({ path: ['images'], key: name, message: `image "${name}": ${ref.error}` });
      else if (ref.digest) problems.push({ path: ['images'], key: name, message: `image "${name}": declare images by tag; put the digest in "digest"` });
      const of: string | undefined = raw.images[name]?.digestOf;
      if (of !== undefined && !(of in raw.images)) problems.push({ path: ['images', name, 'digestOf'], message: `digestOf "${of}" is not in the image table` });
    }
    if (problems.length === 0) {
      try {
        new ImageTable(f.images);
      } catch (err) {
        problems.push({ path: ['images'], message: (err as Error).message });
      }
    }
  }
  const podNames = new Set<string>();
  f.workloads.forEach((w, i) => {
    const containerNames = new Set<string>();
    w.containers.forEach((c, j) => {
      if (containerNames.has(c.name)) problems.push({ path: ['workloads', i, 'containers', j, 'name'], message: `container "${c.name}" is declared twice` });
      containerNames.add(c.name);
    });
    (w.nodes ?? []).forEach((n, j) => {
      if (!nodeNames.has(n)) problems.push({ path: ['workloads', i, 'nodes', j], message: `node "${n}" is not declared in nodes` });
    });
    const r = raw.workloads?.[i];
    if (w.kind === 'DaemonSet' && r?.replicas !== undefined) problems.push({ path: ['workloads', i], key: 'replicas', message: 'a DaemonSet runs one pod per node: leave replicas out (use nodes to choose them)' });
    if (w.kind !== 'DaemonSet' && r?.replicas === undefined) problems.push({ path: ['workloads', i], message: `workload "${w.name}" needs replicas` });
    if (w.kind !== 'Pods' && w.kind !== undefined && r?.owner !== undefined) problems.push({ path: ['workloads', i], key: 'owner', message: `a ${w.kind} owns its pods itself: owner is for kind Pods only` });
    if (r?.updateStrategy !== undefined && w.kind !== 'StatefulSet' && w.kind !== 'DaemonSet') problems.push({ path: ['workloads', i], key: 'updateStrategy', message: `updateStrategy is for a StatefulSet or a DaemonSet, not ${w.kind}` });
    const first = `${w.namespace}/${w.name}-0`;
    if (podNames.has(first)) problems.push({ path: ['workloads', i, 'name'], message: `workload "${w.name}" in namespace "${w.namespace}" is declared twice` });
    podNames.add(first);
  });
  const pdbNames = new Set<string>();
  (f.podDisruptionBudgets ?? []).forEach((p, i) => {
    const key = `${p.namespace}/${p.name}`;
    if (pdbNames.has(key)) problems.push({ path: ['podDisruptionBudgets', i, 'name'], message: `PodDisruptionBudget "${p.name}" in namespace "${p.namespace}" is declared twice` });
    pdbNames.add(key);
    const percent = [p.minAvailable, p.maxUnavailable].find((v) => typeof v === 'string' && Number(v.slice(0, -1)) > 100);
    if (percent !== undefined) problems.push({ path: ['podDisruptionBudgets', i, p.minAvailable === percent ? 'minAvailable' : 'maxUnavailable'], message: `${String(percent)}: must not be greater than 100%` });
  });
  return problems;
}

/**
 * ajv's errors as problems. A `oneOf` reports every branch's failure: where one branch failed
 * deeper inside the value (the author meant that branch), only those deeper errors are kept;
 * otherwise the branches collapse into one "expected A or B".
 */
function problemsOf(errors: ErrorObject[]): Problem[] {
  const dropped = new Set<ErrorObject>();
  const extra: Problem[] = [];
  for (const o of errors.filter((e) => e.keyword === 'oneOf')) {
    const branch = errors.filter((e) => e !== o && e.schemaPath.startsWith(`${o.schemaPath}/`));
    // A wrong type or constant says the branch did not fit; an unknown or missing field inside says it did.
    const shallow = branch.filter((e) => e.instancePath === o.instancePath && ['type', 'const', 'enum'].includes(e.keyword));
    dropped.add(o);
    for (const e of shallow) dropped.add(e);
    if (shallow.length === branch.length || branch.length === 0) {
      const p = problemOf(o);
      const expected = shallow.map((e) => problemOf(e).message.replace(/^.*?: /, '')).join(', or ');
      extra.push({ ...p, message: `${p.path.length ? p.path.join('.') : 'the fixture'}: ${expected}` });
    }
  }
  return [...errors.filter((e) => !dropped.has(e)).map(problemOf), ...extra];
}

function problemOf(e: ErrorObject): Problem {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const at = path.length ? path.join('.') : 'the fixture';
  switch (e.keyword) {
    case 'additionalProperties': {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      return { path, key: extra, message: `unknown field "${extra}" in ${at}` };
    }
    case 'required':
      return { path, message: `${at}: missing required field "${(e.params as { missingProperty: string }).missingProperty}"` };
    case 'enum':
      return { path, message: `${at}: expected one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'type': {
      const t = String((e.params as { type: string }).type);
      const names: Record<string, string> = { object: 'a mapping', array: 'a list', string: 'a string', number: 'a number', integer: 'an integer', boolean: 'true or false' };
      return { path, message: `${at}: expected ${names[t] ?? t}` };
    }
    case 'const':
      return { path, message: `${at}: expected ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}` };
    default:
      return { path, message: `${at}: ${e.message ?? 'invalid'}` };
  }
}

function toError(doc: Document, lineCounter: LineCounter, file: string, problems: Problem[]): KwaveError {
  // oneOf reports each branch's failure too; keep the most specific (deepest) problems first.
  const sorted = [...problems].sort((a, b) => b.path.length - a.path.length);
  const seen = new Set<string>();
  const located = sorted
    .map((p) => ({ p, pos: position(doc, lineCounter, p) }))
    .filter(({ p }) => {
      const k = p.message;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    })
    .sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  const [first, ...rest] = located;
  const more = rest.map(({ p, pos }) => `\n${file}:${pos.line}:${pos.col} ${p.message}`).join('');
  return new KwaveError('FIXTURE', `${first!.p.message}${more}`, ExitCode.BAD_INPUT, {
    file,
    line: first!.pos.line,
    col: first!.pos.col,
    path: first!.p.path.join('.'),
  });
}

function position(doc: Document, lineCounter: LineCounter, p: Problem): { line: number; col: number } {
  let node = doc.getIn(p.path, true) as YamlNode | undefined;
  // Walk up to the nearest ancestor that exists (e.g. for a missing field).
  for (let n = p.path.length; !node && n > 0; n--) node = doc.getIn(p.path.slice(0, n - 1), true) as YamlNode | undefined;
  node ??= doc.contents ?? undefined;
  let offset = node?.range?.[0] ?? 0;
  if (p.key !== undefined && node && isMap(node)) {
    const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === p.key);
    const keyNode = pair && isScalar(pair.key) ? pair.key : undefined;
    if (keyNode?.range) offset = keyNode.range[0];
  }
  const { line, col } = lineCounter.linePos(offset);
  return { line, col };
}

/** The kubelet's timings a fixture sets (seconds → ms); `jitter` (e.g. `--jitter 0`) over the fixture's. */
export function timingOf(f: Fixture, jitter?: number): Partial<Timing> {
  const t = f.timing;
  const ms = (s: number | undefined) => (s === undefined ? undefined : s * 1000);
  const out: Partial<Timing> = { pullMs: ms(t.pullSeconds), startMs: ms(t.startSeconds), readyMs: ms(t.readySeconds), stopMs: ms(t.stopSeconds), crashMs: ms(t.crashSeconds), jitter: jitter ?? t.jitter };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Partial<Timing>;
}
