// The fixture: a YAML file declaring the simulated cluster's nodes and zones, its image table,
// its workloads, its timing and its faults (schemas/fixture.schema.json). Parsing is pure:
// text in, a normalized Fixture or a KwaveError pointing at file:line:col out. Without a file,
// `defaultFixture(pods)` is the default world of docs/sim.md.
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LineCounter, parseDocument, visit, type Document } from 'yaml';
import { ExitCode, KwaveError } from '../errors.js';
import { packagePath } from '../packageRoot.js';
import type { Timing } from './clock.js';
import { checkFixture } from './fixtureChecks.js';
import { problemsOf, toError } from './fixtureProblems.js';
import type { Fixture, FixtureNode, RawFixture } from './fixtureTypes.js';
import type { ImageDecl } from './images.js';

export type { Fixture, FixtureNode, FixturePdb, FixtureWorkload } from './fixtureTypes.js';

const DEFAULT_GATE = 'kwave.dev/in-place-ready';

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

/** The default world (docs/sim.md): `pods` pods demo-0… of nginx:1.14.2 in `default`, gate declared and True. */
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

let compiled: ReturnType<Ajv2020['compile']> | undefined;
function validator(): ReturnType<Ajv2020['compile']> {
  if (!compiled) {
    const schema = JSON.parse(readFileSync(packagePath('schemas', 'fixture.schema.json'), 'utf8')) as object;
    compiled = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false }).compile(
      schema,
    );
  }
  return compiled;
}

/** Fixtures describe worlds by workload and replica count: anything over 4 MiB is refused unread. */
const MAX_FIXTURE_BYTES = 4 * 1024 * 1024;

/** Aliases may expand to at most this many nodes in all (an "alias bomb" is refused). */
const MAX_ALIAS_COUNT = 100;

function tooBig(file: string, bytes: number): KwaveError {
  return new KwaveError('FIXTURE', `expected a fixture of at most 4 MiB, found ${bytes} bytes`, ExitCode.BAD_INPUT, {
    file,
    line: 1,
    col: 1,
    path: '',
  });
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
    throw new KwaveError(
      'FIXTURE',
      `cannot read fixture ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      ExitCode.BAD_INPUT,
    );
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
    throw new KwaveError('FIXTURE', `invalid YAML: ${e.message.split('\n')[0]}`, ExitCode.BAD_INPUT, {
      file,
      line,
      col,
      path: '',
    });
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
  const fixture = normalize((raw ?? {}) as RawFixture);
  const problems = checkFixture(fixture, (raw ?? {}) as RawFixture);
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

function normalize(raw: RawFixture): Fixture {
  return {
    nodes: raw.nodes ?? DEFAULT_NODES.map((n) => ({ ...n })),
    images: raw.images ?? defaultImages(),
    workloads: (raw.workloads ?? []).map((w) => ({
      namespace: w.namespace ?? 'default',
      name: w.name,
      kind: w.kind ?? 'Pods',
      ...(w.kind === 'StatefulSet' || w.kind === 'DaemonSet'
        ? { updateStrategy: w.updateStrategy ?? 'RollingUpdate' }
        : {}),
      // A DaemonSet runs one pod on each of its nodes.
      replicas: w.kind === 'DaemonSet' ? (w.nodes ?? raw.nodes ?? DEFAULT_NODES).length : (w.replicas ?? 0),
      labels: w.labels ?? { app: w.name },
      annotations: w.annotations,
      containers: w.containers,
      readinessGate:
        w.readinessGate === false
          ? undefined
          : {
              conditionType: w.readinessGate?.conditionType ?? DEFAULT_GATE,
              condition: w.readinessGate?.condition ?? 'True',
            },
      owner: w.owner && w.owner.kind !== 'None' ? { kind: w.owner.kind, name: w.owner.name } : undefined,
      nodes: w.nodes,
    })),
    ...(raw.podDisruptionBudgets
      ? { podDisruptionBudgets: raw.podDisruptionBudgets.map((p) => ({ ...p, namespace: p.namespace ?? 'default' })) }
      : {}),
    timing: raw.timing ?? {},
    timeScale: raw.timeScale,
    seed: raw.seed,
    traffic: raw.traffic,
    faults: raw.faults,
  };
}

/** The kubelet's timings a fixture sets (seconds → ms); `jitter` (e.g. `--jitter 0`) over the fixture's. */
export function timingOf(f: Fixture, jitter?: number): Partial<Timing> {
  const t = f.timing;
  const ms = (s: number | undefined) => (s === undefined ? undefined : s * 1000);
  const out: Partial<Timing> = {
    pullMs: ms(t.pullSeconds),
    startMs: ms(t.startSeconds),
    readyMs: ms(t.readySeconds),
    stopMs: ms(t.stopSeconds),
    crashMs: ms(t.crashSeconds),
    jitter: jitter ?? t.jitter,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Partial<Timing>;
}
