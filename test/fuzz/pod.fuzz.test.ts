// Hostile pods, as a broken or malicious API server (or a webhook that rewrites pods) might send
// them: missing status, missing or extra containerStatuses, unknown waiting reasons, huge label
// sets, odd Unicode, absurd resourceVersions, damaged state annotations, a Status body where a pod
// belongs, any value anywhere. Each goes down the path a watch event takes — the decoder, the pod
// cache, the pod view, the state annotation, the completion rule and `decide` — which must never
// throw: a pod that is not a pod is refused with a reason; a pod that is one gets a step.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
import type { PodWatchEvent, WatchPodsQuery } from '../../src/cluster/cluster.js';
import type { PodObserver } from '../../src/cluster/clusterOptions.js';
import { checkedPod, podShapeProblem, watchEvent } from '../../src/cluster/decode.js';

/** The pod kwave keeps, or why it refused the body. */
function decodePod(raw: unknown): { ok: true; pod: V1Pod } | { ok: false; problem: string } {
  try {
    return { ok: true, pod: checkedPod(raw) };
  } catch (err) {
    if (!(err instanceof KubeError)) throw err;
    return { ok: false, problem: err.message };
  }
}

/** A watch line as the pod watch reads it. */
function podWatchEvent(type: unknown, object: unknown) {
  const e = watchEvent(type, object, checkedPod);
  return e && 'object' in e ? { type: e.type, pod: e.object } : e;
}
import { KubeError } from '../../src/cluster/kubeError.js';
import { PodCache, type PodSource } from '../../src/cluster/podCache.js';
import { podCompletion } from '../../src/inplace/completion.js';
import { decide, type DecideContext } from '../../src/inplace/decide.js';
import { conditionSinceMs, isPodReady, podKey } from '../../src/inplace/podView.js';
import { readState, STATE_ANNOTATION } from '../../src/inplace/state.js';
import { injection, oddString, params } from './runs.js';

const GATE = 'kwave.dev/in-place-ready';
const T0 = Date.parse('2026-01-01T00:00:00Z');
const OLD_ID = `docker.io/library/nginx@sha256:${'a'.repeat(64)}`;
const NEW_ID = `docker.io/library/nginx@sha256:${'b'.repeat(64)}`;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A well-formed pod mid-upgrade, as raw watch JSON: the starting point of every mutation. */
function basePod(): { [k: string]: Json } {
  const state = {
    plan: 'web',
    revision: 'r1',
    wave: 1,
    startedAt: new Date(T0).toISOString(),
    direction: 'upgrade',
    containers: {
      nginx: {
        fromImage: 'nginx:1.14.2',
        fromImageID: OLD_ID,
        fromContainerID: 'containerd://1',
        fromRestartCount: 0,
        toImage: 'nginx:1.25.3',
      },
    },
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-0',
      namespace: 'default',
      uid: 'u1',
      resourceVersion: '100',
      labels: { app: 'web' },
      annotations: { [STATE_ANNOTATION]: JSON.stringify(state) },
    },
    spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }], readinessGates: [{ conditionType: GATE }] },
    status: {
      phase: 'Running',
      conditions: [
        {
          type: GATE,
          status: 'False',
          reason: 'InPlaceUpdate',
          message: 'kwave: upgrade by plan web (revision r1)',
          lastTransitionTime: new Date(T0).toISOString(),
        },
        { type: 'Ready', status: 'False', lastTransitionTime: new Date(T0).toISOString() },
      ],
      containerStatuses: [
        {
          name: 'nginx',
          image: 'docker.io/library/nginx:1.25.3',
          imageID: NEW_ID,
          containerID: 'containerd://2',
          restartCount: 1,
          ready: true,
          state: { running: { startedAt: new Date(T0 + 1000).toISOString() } },
        },
      ],
    },
  };
}

const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;

/** Every path (list of keys/indices) into a JSON value. */
function pathsOf(v: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...pathsOf(x, [...prefix, i])));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) out.push(...pathsOf(x, [...prefix, k]));
  return out;
}

function setAt(root: Json, path: (string | number)[], value: Json | undefined): Json {
  if (path.length === 0) return value ?? null;
  let node = root as Record<string | number, Json>;
  for (const seg of path.slice(0, -1)) node = node[seg] as Record<string | number, Json>;
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else node[last] = value;
  return root;
}

type Mutation = (pod: { [k: string]: Json }) => Json;

const waitingReason = fc.oneof(
  fc.constantFrom(
    'ErrImagePull',
    'ImagePullBackOff',
    'CrashLoopBackOff',
    'ContainerCreating',
    'PodInitializing',
    'SomethingNew',
    '',
  ),
  oddString,
);
const resourceVersion = fc.oneof(
  fc.constantFrom('', '0', '-1', '1e9', '99999999999999999999999999999', 'abc', ' 12', '0x10', '١٢٣'),
  fc.bigInt({ min: 0n, max: 10n ** 40n }).map(String),
  oddString,
);

/** The targeted damages of the issue, plus "any value at any path". */
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant<Mutation>((p) => (delete p.status, p)),
  fc.constant<Mutation>((p) => (delete (p.status as Record<string, Json>).containerStatuses, p)),
  fc.constant<Mutation>((p) => (delete p.spec, p)),
  fc.constant<Mutation>((p) => (delete p.metadata, p)),
  fc.constant<Mutation>(() => ({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: 'etcdserver: request timed out',
    reason: 'InternalError',
    code: 500,
  })),
  fc.constant<Mutation>(() => ({ kind: 'PodList', apiVersion: 'v1', items: [basePod()] })),
  anyJson.map<Mutation>((v) => () => v),
  fc
    .array(
      fc.record({ name: fc.oneof(fc.constant('nginx'), oddString), ready: fc.boolean(), restartCount: fc.integer() }),
      { maxLength: 4 },
    )
    .map<Mutation>((extra) => (p) => {
      ((p.status as Record<string, Json[]>).containerStatuses ??= []).push(...extra);
      return p;
    }),
  waitingReason.map<Mutation>((reason) => (p) => {
    const cs = (p.status as Record<string, Record<string, Json>[]>).containerStatuses![0]!;
    cs.state = { waiting: { reason, message: 'x'.repeat(3) } };
    cs.ready = false;
    return p;
  }),
  fc.integer({ min: 100, max: 3000 }).map<Mutation>((n) => (p) => {
    const labels = (p.metadata as Record<string, Record<string, Json>>).labels!;
    for (let i = 0; i < n; i++) labels[`k${i}.example.com/label-${i}`] = 'v'.repeat(63);
    return p;
  }),
  fc
    .tuple(fc.constantFrom('name', 'namespace', 'uid'), fc.oneof(oddString, injection))
    .map<Mutation>(([k, v]) => (p) => {
      (p.metadata as Record<string, Json>)[k] = v;
      return p;
    }),
  resourceVersion.map<Mutation>((rv) => (p) => {
    (p.metadata as Record<string, Json>).resourceVersion = rv;
    return p;
  }),
  fc
    .oneof(
      oddString,
      injection,
      anyJson.map((v) => JSON.stringify(v)),
    )
    .map<Mutation>((text) => (p) => {
      (p.metadata as Record<string, Record<string, Json>>).annotations![STATE_ANNOTATION] = text;
      return p;
    }),
  fc
    .record({
      key: fc.constantFrom(
        'plan',
        'revision',
        'wave',
        'startedAt',
        'direction',
        'containers',
        '__proto__',
        'constructor',
      ),
      value: anyJson,
    })
    .map<Mutation>(({ key, value }) => (p) => {
      const ann = (p.metadata as Record<string, Record<string, Json>>).annotations!;
      const state = JSON.parse(ann[STATE_ANNOTATION] as string) as Record<string, Json>;
      state[key] = value;
      ann[STATE_ANNOTATION] = JSON.stringify(state);
      return p;
    }),
  fc.tuple(fc.nat(), anyJson, fc.boolean()).map<Mutation>(([i, value, remove]) => (p) => {
    const paths = pathsOf(p).filter((x) => x.length > 0);
    return setAt(p, paths[i % paths.length]!, remove ? undefined : value);
  }),
);

const hostilePod: fc.Arbitrary<Json> = fc.array(mutation, { minLength: 1, maxLength: 4 }).map((ms) => {
  let pod: Json = basePod();
  for (const m of ms) {
    if (pod === null || typeof pod !== 'object' || Array.isArray(pod)) break;
    const before: Json = structuredClone(pod);
    try {
      pod = m(pod);
    } catch {
      pod = before; // an earlier mutation removed what this one damages
    }
  }
  return pod;
});

const STEP_KINDS = new Set([
  'vanished',
  'refused',
  'foreign',
  'skipped',
  'close-gate',
  'wait-drain',
  'patch',
  'wait-complete',
  'open-gate',
  'wait-ready',
  'done',
  'failed',
]);

function context(direction: 'upgrade' | 'rollback'): DecideContext {
  return {
    plan: 'web',
    revision: 'r1',
    wave: 1,
    direction,
    containers: [{ name: 'nginx', image: 'nginx:1.25.3' }],
    gate: { conditionType: GATE, required: true },
    nowMs: T0 + 5_000,
    drainMs: 0,
    podTimeoutMs: 300_000,
    minReadyMs: 0,
  };
}

/** Everything the in-place flow asks of a decoded pod. */
function exerciseFlow(pod: V1Pod): void {
  podKey(pod);
  isPodReady(pod);
  conditionSinceMs(pod, GATE);
  const st = readState(pod);
  if (st.kind === 'ok') {
    const c = podCompletion(pod, st.state);
    assert.ok(['waiting', 'done', 'failed'].includes(c.status), `completion status ${c.status}`);
  } else if (st.kind === 'malformed') assert.equal(typeof st.error, 'string');
  for (const direction of ['upgrade', 'rollback'] as const) {
    const step = decide(pod, context(direction));
    assert.ok(STEP_KINDS.has(step.kind), `unknown step ${step.kind}`);
    assert.equal(typeof step.message, 'string');
    // A patch body is sent as JSON: it must survive a round trip unchanged.
    if ('body' in step) assert.deepEqual(JSON.parse(JSON.stringify(step.body)), step.body);
  }
}

describe('hostile pods', () => {
  test('the decoder refuses what is not a pod, and the flow never throws on what is', (t) => {
    let refused = 0;
    fc.assert(
      fc.property(hostilePod, (raw) => {
        const decoded = decodePod(raw);
        if (!decoded.ok) {
          refused++;
          assert.ok(decoded.problem.length > 0);
          const event = podWatchEvent('MODIFIED', raw);
          assert.equal(event?.type, 'ERROR');
          return;
        }
        assert.equal(podShapeProblem(decoded.pod), undefined, 'a decoded pod keeps its shape');
        exerciseFlow(decoded.pod);
      }),
      params(t, 400),
    );
    t.diagnostic(`refused as not a pod: ${refused}`);
  });

  test('typed pods (Dates, as client-node returns them) pass the same checks', (t) => {
    fc.assert(
      fc.property(hostilePod, (raw) => {
        const decoded = decodePod(raw);
        if (decoded.ok) exerciseFlow(structuredClone(decoded.pod));
      }),
      params(t, 100),
    );
  });

  test('watch lines of any type and object become an event or nothing, never a throw', (t) => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'), anyJson),
        fc.oneof(hostilePod, anyJson),
        (type, object) => {
          const event = podWatchEvent(type, object);
          if (event?.type === 'ERROR') assert.ok(event.error instanceof KubeError);
          if (event && event.type !== 'ERROR' && event.type !== 'BOOKMARK')
            assert.equal(podShapeProblem(event.pod), undefined);
        },
      ),
      params(t, 300),
    );
  });

  test('a pod cache fed hostile watch streams keeps only pods, and relists or rewatches', async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR', 'WAT'),
            fc.oneof(hostilePod, anyJson),
          ),
          { maxLength: 12 },
        ),
        async (lines) => {
          const source = new StreamSource(lines);
          const cache = new PodCache(source, {
            namespaces: ['default'],
            deps: { sleep: instantSleep },
            minWatchMs: 0,
            watchTimeoutSeconds: 1,
          });
          try {
            await cache.synced;
            await source.drained;
            for (const pod of cache.list()) {
              assert.equal(podShapeProblem(pod), undefined);
              exerciseFlow(pod);
            }
          } finally {
            cache.close();
          }
        },
      ),
      params(t, 100),
    );
  });
});

/** Sleeps that end at once (back-off) unless aborted first; long ones wait for their abort. */
function instantSleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (ms > 10_000)
    return new Promise((resolve) => signal?.addEventListener('abort', () => resolve(false), { once: true }));
  return Promise.resolve(true);
}

/** One list, then the hostile lines on the first watch (through the real line decoder), then quiet watches. */
class StreamSource implements PodSource {
  private observers = new Set<PodObserver>();
  private resolveDrained!: () => void;
  readonly drained = new Promise<void>((r) => (this.resolveDrained = r));
  private watches = 0;

  constructor(private readonly lines: [unknown, unknown][]) {}

  async listPods() {
    return { items: [], resourceVersion: '1' };
  }
  async getPod(): Promise<V1Pod> {
    throw new KubeError(404, 'NotFound', 'not found');
  }
  onPodObserved(o: PodObserver) {
    this.observers.add(o);
    return () => this.observers.delete(o);
  }
  async watchPods(
    _ns: string,
    _q: WatchPodsQuery,
    onEvent: (e: PodWatchEvent) => void,
    onDone: (e?: KubeError) => void,
  ) {
    this.watches++;
    let open = true;
    if (this.watches === 1) {
      queueMicrotask(() => {
        for (const [type, object] of this.lines) {
          if (!open) break;
          const event = podWatchEvent(type, object);
          if (event) onEvent(event);
        }
        if (open) {
          open = false;
          onDone(undefined);
        }
        this.resolveDrained();
      });
    } else this.resolveDrained();
    return {
      abort: () => {
        if (!open) return;
        open = false;
        onDone(new KubeError(0, 'Aborted', 'aborted'));
      },
    };
  }
}
