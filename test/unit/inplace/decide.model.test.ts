// A property test of the per-pod flow against a tiny pure model of the API server and kubelet:
// the controller observes the pod through a lagging cache (a cursor into the pod's history that
// only moves forward, as a watch does, and that is at least at the version its own last write
// returned), decides, and writes; the kubelet restarts containers whose spec changed and
// recomputes Ready; time passes; the process restarts (a new one starts from a fresh list, and
// `decide` keeps nothing to lose). Whatever the interleaving: exactly one image patch lands, the
// three writes land in order, the container restarts once, the patch lands only on a drained
// pod, and the gate ends True. Another writer may touch the pod at any time (409s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { decide, type DecideContext, type GatePatch, type ImagePatch } from '../../../src/inplace/decide.js';
import { GATE, imageIDOf, makePod, NEW, OLD, RETAG, statusImageOf, T0 } from './fixtures.js';

const BROKEN = 'nginx:broken';
const CRASH = 'nginx:crash';

type Action = 'kubelet' | 'tick' | 'observe-fresh' | 'observe-stale' | 'restart' | 'other-writer';
type WriteKind = 'close-gate' | 'patch' | 'open-gate';

class World {
  pod: V1Pod;
  now = T0;
  rv = 100;
  history: V1Pod[] = [];
  /** The controller's view: an index into `history` that only moves forward. */
  cursor = 0;
  writes: { kind: WriteKind; ok: boolean }[] = [];
  /** Spec image each running container was started from (the kubelet's container hash). */
  startedFrom = new Map<string, string>();
  creating = new Set<string>();
  nextContainer = 1;
  patchedWhileReady = false;
  patchedBeforeDrain = false;

  constructor(
    readonly drainMs: number,
    readonly slowStart: boolean,
  ) {
    this.pod = makePod({ rv: String(this.rv), containers: [{ name: 'nginx', image: OLD }] });
    this.startedFrom.set('nginx', OLD);
    this.record();
  }

  private record(): void {
    this.pod.metadata!.resourceVersion = String(++this.rv);
    this.history.push(structuredClone(this.pod));
  }

  /** What a lagging watch cache shows after catching up by `step` events. */
  lagging(step: number): V1Pod {
    this.cursor = Math.min(this.history.length - 1, this.cursor + step);
    return structuredClone(this.history[this.cursor] as V1Pod);
  }

  /** A fresh list (or a get): the cache is current. */
  fresh(): V1Pod {
    this.cursor = this.history.length - 1;
    return structuredClone(this.pod);
  }

  /** A successful write returns the new object: the controller's view is at least that. */
  private wrote(): void {
    this.cursor = this.history.length - 1;
  }

  /** A write without a resourceVersion is never refused, as on a real API server. */
  private current(rv: string | undefined): boolean {
    return rv === undefined || rv === this.pod.metadata!.resourceVersion;
  }

  patchStatus(kind: WriteKind, body: GatePatch): void {
    const ok = this.current(body.metadata.resourceVersion);
    this.writes.push({ kind, ok });
    if (!ok) return;
    const conditions = this.pod.status!.conditions!;
    for (const c of body.status.conditions) {
      const i = conditions.findIndex((x) => x.type === c.type);
      const next = { ...c, lastTransitionTime: c.lastTransitionTime as unknown as Date };
      if (i >= 0) conditions[i] = next;
      else conditions.push(next);
    }
    this.record();
    this.wrote();
  }

  patchImage(body: ImagePatch): void {
    const ok = this.current(body.metadata.resourceVersion);
    this.writes.push({ kind: 'patch', ok });
    if (!ok) return;
    const ready = this.pod.status!.conditions!.find((c) => c.type === 'Ready')?.status === 'True';
    if (ready) this.patchedWhileReady = true;
    const gate = this.pod.status!.conditions!.find((c) => c.type === GATE);
    const closedAt = Date.parse(
      String(
        gate?.lastTransitionTime instanceof Date ? gate.lastTransitionTime.toISOString() : gate?.lastTransitionTime,
      ),
    );
    if (gate?.status === 'False' && this.now < closedAt + this.drainMs) this.patchedBeforeDrain = true;
    for (const c of body.spec?.containers ?? []) {
      const spec = this.pod.spec!.containers.find((x) => x.name === c.name)!;
      spec.image = c.image;
    }
    this.pod.metadata!.annotations = { ...this.pod.metadata!.annotations, ...body.metadata.annotations };
    this.record();
    this.wrote();
  }

  /** Someone else labels the pod: its resourceVersion moves, so a write decided before 409s. */
  otherWriter(): void {
    this.pod.metadata!.labels = { ...this.pod.metadata!.labels, touched: String(this.rv) };
    this.record();
  }

  /** One kubelet sync: restart changed containers, progress starting ones, recompute Ready. */
  kubelet(): void {
    let changed = false;
    for (const spec of this.pod.spec!.containers) {
      const cs = this.pod.status!.containerStatuses!.find((s) => s.name === spec.name) as V1ContainerStatus;
      if (spec.image !== this.startedFrom.get(spec.name)) {
        cs.lastState = { terminated: { exitCode: 0, reason: 'Completed', containerID: cs.containerID } };
        cs.restartCount += 1;
        this.startedFrom.set(spec.name, spec.image!);
        if (spec.image === BROKEN) {
          cs.containerID = '';
          cs.image = statusImageOf(spec.image);
          cs.imageID = '';
          cs.state = {
            waiting: { reason: 'ErrImagePull', message: 'rpc error: code = NotFound desc = nginx:broken not found' },
          };
          cs.ready = false;
        } else if (this.slowStart) {
          this.creating.add(spec.name);
          cs.state = { waiting: { reason: 'ContainerCreating' } };
          cs.ready = false;
        } else {
          this.start(cs, spec.image!);
        }
        changed = true;
      } else if (this.creating.has(spec.name)) {
        this.creating.delete(spec.name);
        this.start(cs, spec.image!);
        changed = true;
      } else if (spec.image === CRASH && cs.state?.running) {
        cs.lastState = { terminated: { exitCode: 1, reason: 'Error', containerID: cs.containerID } };
        cs.state = { terminated: { exitCode: 1, reason: 'Error' } };
        changed = true;
      } else if (spec.image === CRASH && cs.state?.terminated) {
        cs.restartCount += 1;
        cs.state = {
          waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=nginx' },
        };
        changed = true;
      } else if (cs.state?.running && !cs.ready) {
        cs.ready = true;
        changed = true;
      }
    }
    const conditions = this.pod.status!.conditions!;
    const gateTrue = conditions.find((c) => c.type === GATE)?.status === 'True';
    const ready = gateTrue && this.pod.status!.containerStatuses!.every((c) => c.ready) ? 'True' : 'False';
    const readyCond = conditions.find((c) => c.type === 'Ready')!;
    if (readyCond.status !== ready) {
      readyCond.status = ready;
      readyCond.lastTransitionTime = new Date(this.now);
      changed = true;
    }
    if (changed) this.record();
  }

  private start(cs: V1ContainerStatus, image: string): void {
    cs.containerID = `containerd://nginx-${this.nextContainer++}`;
    cs.image = statusImageOf(image);
    cs.imageID = imageIDOf(image);
    cs.state = { running: { startedAt: new Date(this.now) } };
    cs.ready = false;
  }
}

/** Runs one flow (upgrade or rollback) through `actions`, then to its end on fresh observations. */
function drive(
  world: World,
  ctx0: Omit<DecideContext, 'nowMs'>,
  actions: readonly Action[],
  staleness: readonly number[],
): string | undefined {
  let done = false;
  let outcome: string | undefined;
  const act = (pod: V1Pod) => {
    const step = decide(pod, { ...ctx0, nowMs: world.now });
    switch (step.kind) {
      case 'close-gate':
      case 'open-gate':
        world.patchStatus(step.kind, step.body);
        break;
      case 'patch':
        world.patchImage(step.body);
        break;
      case 'wait-drain':
      case 'wait-complete':
      case 'wait-ready':
        break;
      case 'done':
        done = true;
        outcome = 'done';
        break;
      case 'failed':
        done = true;
        outcome = `failed ${step.reason}`;
        break;
      default:
        assert.fail(`unexpected step ${JSON.stringify(step)}`);
    }
  };
  actions.forEach((a, i) => {
    if (done) return;
    if (a === 'kubelet') world.kubelet();
    else if (a === 'tick') world.now += 700;
    else if (a === 'observe-fresh') act(world.fresh());
    else if (a === 'observe-stale') act(world.lagging(staleness[i % staleness.length] as number));
    // A new process lists afresh; `decide` itself keeps no memory to lose.
    else if (a === 'restart') world.fresh();
    else if (a === 'other-writer') world.otherWriter();
  });
  for (let i = 0; i < 200 && !done; i++) {
    act(world.lagging(1));
    world.kubelet();
    world.now += 500;
  }
  return outcome;
}

const arbRun = fc.record({
  target: fc.constantFrom(NEW, RETAG),
  drainMs: fc.constantFrom(0, 1_000, 3_000),
  minReadyMs: fc.constantFrom(0, 2_000),
  slowStart: fc.boolean(),
  actions: fc.array(
    fc.constantFrom<Action>('kubelet', 'tick', 'observe-fresh', 'observe-stale', 'restart', 'other-writer'),
    { maxLength: 120 },
  ),
  rollbackActions: fc.array(
    fc.constantFrom<Action>('kubelet', 'tick', 'observe-fresh', 'observe-stale', 'restart', 'other-writer'),
    { maxLength: 120 },
  ),
  staleness: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 8 }),
});

test('model: any interleaving upgrades with exactly three writes, one restart, gate open; rollback likewise', () => {
  fc.assert(
    fc.property(arbRun, (r) => {
      const world = new World(r.drainMs, r.slowStart);
      const ctx: Omit<DecideContext, 'nowMs'> = {
        plan: 'web',
        revision: 'r1',
        wave: 1,
        direction: 'upgrade',
        containers: [{ name: 'nginx', image: r.target }],
        gate: { conditionType: GATE, required: true },
        drainMs: r.drainMs,
        podTimeoutMs: 3_600_000,
        minReadyMs: r.minReadyMs,
        uid: 'uid-web-0',
      };

      assert.equal(drive(world, ctx, r.actions, r.staleness), 'done');
      const landed = () => world.writes.filter((w) => w.ok).map((w) => w.kind);
      assert.deepEqual(landed(), ['close-gate', 'patch', 'open-gate']);
      const cs = () => world.pod.status!.containerStatuses![0]!;
      assert.equal(cs().restartCount, 1);
      assert.equal(cs().imageID, imageIDOf(r.target));
      assert.equal(world.pod.spec!.containers[0]!.image, r.target);
      const cond = (t: string) => world.pod.status!.conditions!.find((c) => c.type === t)?.status;
      assert.equal(cond(GATE), 'True');
      assert.equal(cond('Ready'), 'True');
      assert.equal(world.patchedWhileReady, false, 'patched a Ready pod');
      assert.equal(world.patchedBeforeDrain, false, 'patched before drainSeconds');

      assert.equal(drive(world, { ...ctx, direction: 'rollback' }, r.rollbackActions, r.staleness), 'done');
      assert.deepEqual(landed(), ['close-gate', 'patch', 'open-gate', 'close-gate', 'patch', 'open-gate']);
      assert.equal(cs().restartCount, 2);
      assert.equal(cs().imageID, imageIDOf(OLD));
      assert.equal(world.pod.spec!.containers[0]!.image, OLD);
      assert.equal(cond(GATE), 'True');
      assert.equal(world.patchedWhileReady, false, 'rollback patched a Ready pod');
    }),
    { numRuns: 80 },
  );
});

test('model: a broken or crashing image fails with the kubelet reason, gate kept closed; rollback restores and reopens', () => {
  fc.assert(
    fc.property(arbRun, fc.constantFrom(BROKEN, CRASH), (r, bad) => {
      const world = new World(r.drainMs, r.slowStart);
      const ctx: Omit<DecideContext, 'nowMs'> = {
        plan: 'web',
        revision: 'r1',
        wave: 1,
        direction: 'upgrade',
        containers: [{ name: 'nginx', image: bad }],
        gate: { conditionType: GATE, required: true },
        drainMs: r.drainMs,
        podTimeoutMs: 3_600_000,
        minReadyMs: r.minReadyMs,
      };
      assert.equal(
        drive(world, ctx, r.actions, r.staleness),
        bad === BROKEN ? 'failed ErrImagePull' : 'failed CrashLoopBackOff',
      );
      const landed = () => world.writes.filter((w) => w.ok).map((w) => w.kind);
      assert.deepEqual(landed(), ['close-gate', 'patch']);
      const cond = (t: string) => world.pod.status!.conditions!.find((c) => c.type === t)?.status;
      assert.equal(cond(GATE), 'False');

      assert.equal(drive(world, { ...ctx, direction: 'rollback' }, r.rollbackActions, r.staleness), 'done');
      // Still drained by the failed upgrade: no second close, straight to the patch.
      assert.deepEqual(landed(), ['close-gate', 'patch', 'patch', 'open-gate']);
      const cs = world.pod.status!.containerStatuses![0]!;
      assert.equal(cs.imageID, imageIDOf(OLD));
      assert.equal(world.pod.spec!.containers[0]!.image, OLD);
      assert.equal(cond(GATE), 'True');
      assert.equal(cond('Ready'), 'True');
    }),
    { numRuns: 50 },
  );
});
