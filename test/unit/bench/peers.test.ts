import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FleetProgress, type PodVersion } from '../../../bench/peers/fleetProgress.js';
import { installableManifests } from '../../../bench/peers/kruiseInstall.js';
import { checkTargets, peerRow, peersFile, writesOf, type Measurement } from '../../../bench/peers/rows.js';
import { kwavePlan } from '../../../bench/peers/upgradeOnce.js';
import type { AuditRecord } from '../../../src/sim/controlPlane/audit.js';
import { loadPlanText } from '../../../src/plan/load.js';
import { nodePodCapacity } from '../../../src/sim/world.js';

const OLD = 'sha256:' + 'a'.repeat(64);
const NEW = 'sha256:' + 'b'.repeat(64);

function pod(
  name: string,
  o: {
    uid?: string;
    image?: string;
    digest?: string;
    restarts?: number;
    ready?: boolean;
    gate?: 'True' | 'False';
    running?: boolean;
  } = {},
): PodVersion {
  return {
    metadata: { name, uid: o.uid ?? `uid-${name}` },
    spec: { containers: [{ name: 'nginx', image: o.image ?? 'nginx:1.14.2' }] },
    status: {
      conditions: [
        { type: 'Ready', status: o.ready === false ? 'False' : 'True' },
        ...(o.gate ? [{ type: 'kwave.dev/in-place-ready', status: o.gate }] : []),
      ],
      containerStatuses: [
        {
          name: 'nginx',
          imageID: `docker.io/library/nginx@${o.digest ?? OLD}`,
          restartCount: o.restarts ?? 0,
          ready: o.running ?? o.ready !== false,
        },
      ],
    },
  };
}

const progressOf = (pods: PodVersion[]) =>
  new FleetProgress(pods, { container: 'nginx', toImage: 'nginx:1.25.3', toDigest: NEW, startedAt: 1000 });

/**
 * One pod's in-place upgrade: gate closed 50 ms before `at`, not Ready at `at`, patched `drain` ms
 * later, running on the new image 400 ms after that, Ready (gate open) 100 ms after that.
 */
function upgrade(p: FleetProgress, name: string, at: number, drain: number): void {
  const to = { image: 'nginx:1.25.3', digest: NEW, restarts: 1 };
  p.observe(pod(name, { gate: 'False', running: true }), at - 50);
  p.observe(pod(name, { gate: 'False', ready: false, running: true }), at);
  p.observe(pod(name, { gate: 'False', ready: false, running: true, image: 'nginx:1.25.3' }), at + drain);
  p.observe(pod(name, { gate: 'False', ready: false, running: false, ...to }), at + drain + 300);
  p.observe(pod(name, { gate: 'False', ready: false, running: true, ...to }), at + drain + 400);
  p.observe(pod(name, { gate: 'True', ...to }), at + drain + 500);
}

describe('FleetProgress (what the peer benchmark sees of an upgrade)', () => {
  it('is done when every pod is Ready on the target imageID; wall to the last, drains per pod, in place', () => {
    const p = progressOf([pod('web-0'), pod('web-1')]);
    upgrade(p, 'web-0', 1100, 2000);
    assert.equal(p.done(2), false);
    upgrade(p, 'web-1', 1200, 2500);
    assert.equal(p.done(2), true);
    assert.deepEqual(p.summary(), {
      wallMs: 1200 + 2500 + 500 - 1000,
      inPlace: true,
      problems: [],
      drainsMs: [2000, 2500],
      readyMidDrain: 0,
      readyLostAfterDone: 0,
      maxNotReady: 1,
      maxNotReadyByTool: 1,
      phases: {
        firstCloseMs: 1100 - 50 - 1000,
        closeToNotReadyMs: [50, 50],
        patchToRunningMs: [400, 400],
        runningToReadyMs: [100, 100],
        busyMs: 50 + 2000 + 500 + (50 + 2500 + 500),
      },
    });
  });

  it('counts the pods Ready again between their not Ready and their image patch, gate closed', () => {
    const p = progressOf([pod('web-0'), pod('web-1')]);
    const closed = (name: string, ready: boolean) => {
      const v = pod(name, { ready });
      v.status!.conditions!.push({ type: 'kwave.dev/in-place-ready', status: 'False' });
      return v;
    };
    p.observe(closed('web-0', false), 1100);
    p.observe(closed('web-0', true), 1200); // a stale Ready True written back mid-drain
    p.observe(closed('web-0', false), 1210);
    p.observe(closed('web-1', true), 1100); // gate closed, not yet seen not Ready: not mid-drain
    upgrade(p, 'web-1', 1300, 2000);
    assert.equal(p.summary().readyMidDrain, 1);
  });

  it('counts the pods not Ready again after they were Ready on the target, and times the wall to their last Ready', () => {
    const p = progressOf([pod('web-0'), pod('web-1')]);
    upgrade(p, 'web-0', 1100, 2000);
    const to = { gate: 'True', image: 'nginx:1.25.3', digest: NEW, restarts: 1 } as const;
    p.observe(pod('web-0', { ...to, ready: false, running: true }), 3700); // a stale Ready False written back
    assert.equal(p.done(2), false);
    p.observe(pod('web-0', to), 4300);
    upgrade(p, 'web-1', 1200, 2000);
    assert.equal(p.done(2), true);
    const summary = p.summary();
    assert.equal(summary.readyLostAfterDone, 1);
    assert.equal(summary.wallMs, 4300 - 1000);
  });

  it('leaves out of the phases a pod not seen through every step', () => {
    const p = progressOf([pod('web-0'), pod('web-1')]);
    upgrade(p, 'web-0', 1100, 2000);
    // web-1 patched without being seen not Ready first (no drain), then done
    p.observe(pod('web-1', { image: 'nginx:1.25.3', digest: NEW, restarts: 1 }), 1500);
    const { phases } = p.summary();
    assert.deepEqual(phases.closeToNotReadyMs, [50]);
    assert.equal(phases.busyMs, 50 + 2000 + 500);
  });

  it("counts the most not Ready at once, and apart the tool's: gate closed, or patched and not yet done", () => {
    const p = progressOf([pod('web-0'), pod('web-1'), pod('web-2')]);
    const gated = pod('web-0', { ready: false });
    gated.status!.conditions!.push({ type: 'kwave.dev/in-place-ready', status: 'False' });
    p.observe(gated, 1100);
    p.observe(pod('web-1', { ready: false, image: 'nginx:1.25.3' }), 1200);
    p.observe(pod('web-2', { ready: false }), 1300); // made not Ready by something else
    const s = p.summary();
    assert.equal(s.maxNotReady, 3);
    assert.equal(s.maxNotReadyByTool, 2);
  });

  it('is not in place when a pod was recreated, restarted twice, or a pod was added or went', () => {
    const p = progressOf([pod('web-0'), pod('web-1'), pod('web-2')]);
    p.observe(pod('web-0', { uid: 'new', image: 'nginx:1.25.3', digest: NEW, restarts: 0 }), 1500);
    p.observe(pod('web-1', { image: 'nginx:1.25.3', digest: NEW, restarts: 2 }), 1500);
    p.remove('web-2');
    p.observe(pod('web-3', { image: 'nginx:1.25.3', digest: NEW }), 1600);
    assert.equal(p.done(3), true);
    const s = p.summary();
    assert.equal(s.inPlace, false);
    assert.deepEqual(s.problems, [
      'web-0: recreated (new uid)',
      'web-1: restartCount 0 → 2',
      'web-3: a new pod',
      'web-2: gone',
    ]);
  });

  it('counts a pod that leaves Ready again (a crash after the upgrade) as not done', () => {
    const p = progressOf([pod('web-0')]);
    upgrade(p, 'web-0', 1100, 0);
    assert.equal(p.done(1), true);
    p.observe(pod('web-0', { image: 'nginx:1.25.3', digest: NEW, restarts: 2, ready: false }), 3000);
    assert.equal(p.done(1), false);
    p.observe(pod('web-0', { image: 'nginx:1.25.3', digest: NEW, restarts: 2 }), 3500);
    assert.equal(p.done(1), true);
    assert.equal(p.summary().wallMs, 2500);
  });
});

function record(verb: string, o: Partial<AuditRecord> = {}): AuditRecord {
  return {
    auditID: 'x',
    stage: 'ResponseComplete',
    user: 'kwave-admin',
    groups: [],
    verb,
    resource: 'pods',
    subresource: undefined,
    namespace: 'ns',
    name: 'web-0',
    apiGroup: '',
    path: '/',
    code: 200,
    userAgent: 'kwave/0.1.0 (linux/x64)',
    ...o,
  };
}

describe("writesOf (a tool's writes in the audit log)", () => {
  it('counts writes by user and user agent, refused apart, pod writes among the accepted', () => {
    const records = [
      record('patch'),
      record('patch', { subresource: 'status' }),
      record('patch', { code: 409 }),
      record('update', { resource: 'configmaps' }),
      record('get'),
      record('watch'),
      record('patch', { userAgent: 'kubectl/v1.32.4' }),
      record('patch', { user: 'system:serviceaccount:kruise-system:kruise-manager' }),
    ];
    assert.deepEqual(writesOf(records, { user: 'kwave-admin', userAgentPrefix: 'kwave/' }), {
      accepted: 3,
      refused: 1,
      pods: 2,
    });
    assert.deepEqual(writesOf(records, { user: 'system:serviceaccount:kruise-system:kruise-manager' }), {
      accepted: 1,
      refused: 0,
      pods: 1,
    });
  });
});

function measurement(tool: Measurement['tool'], wall: number, o: Partial<Measurement> = {}): Measurement {
  return {
    tool,
    pods: 100,
    wallSeconds: wall,
    writes: { accepted: 300, refused: 0, pods: 300 },
    unready: { p50: 2.5, p95: 2.9, max: 3.1 },
    maxNotReady: 10,
    maxNotReadyWatched: 10,
    maxNotReadyByTool: 10,
    cpuSeconds: 1.5,
    rssMb: 120,
    inPlace: true,
    drainsSeconds: [2.1],
    readyMidDrain: 0,
    readyLostAfterDone: 0,
    phases: {
      firstCloseMs: 200,
      closeToNotReadyMs: [40, 50, 60],
      patchToRunningMs: [500],
      runningToReadyMs: [100],
      busyMs: 10 * (wall * 1000 - 200),
    },
    ...o,
  };
}

describe('the rows and peers-N.json', () => {
  it('takes the median of each figure, in place only if every repeat was', () => {
    const row = peerRow(
      [
        measurement('kwave', 12),
        measurement('kwave', 10, { writes: { accepted: 320, refused: 0, pods: 300 }, inPlace: false }),
        measurement('kwave', 11.004, {
          cpuSeconds: 1.234,
          drainsSeconds: [2.0, 2.3, 2.4],
          readyMidDrain: 2,
          readyLostAfterDone: 1,
        }),
      ],
      10,
    );
    assert.deepEqual(row, {
      tool: 'kwave',
      wall_s: 11,
      writes_per_pod: 3,
      unready_p50_s: 2.5,
      unready_p95_s: 2.9,
      max_not_ready: 10,
      cpu_s: 1.5,
      rss_mb: 120,
      in_place: false,
      phases: {
        first_close_s: 0.2,
        close_to_not_ready_s: 0.05,
        drain_s: 2.1,
        drain_min_s: 2.1,
        patch_to_running_s: 0.5,
        running_to_ready_s: 0.1,
        window_full: 1,
      },
      runs: [
        { wall_s: 12, ready_mid_drain: 0, ready_lost_after_done: 0 },
        { wall_s: 10, ready_mid_drain: 0, ready_lost_after_done: 0 },
        { wall_s: 11, ready_mid_drain: 2, ready_lost_after_done: 1 },
      ],
    });
  });

  it("has the issue's shape (and the phases), a row per tool in a fixed order, and checks the targets", () => {
    const file = peersFile({ pods: 100, maxUnavailable: 10, drainSeconds: 2, kubelet: 'simulated' }, [
      measurement('kruise', 10, { writes: { accepted: 500, refused: 9, pods: 450 } }),
      measurement('kwave', 7.5),
    ]);
    assert.deepEqual(Object.keys(file), ['pods', 'maxUnavailable', 'drainSeconds', 'kubelet', 'rows']);
    assert.deepEqual(
      file.rows.map((r) => r.tool),
      ['kwave', 'kruise'],
    );
    assert.deepEqual(Object.keys(file.rows[0]!), [
      'tool',
      'wall_s',
      'writes_per_pod',
      'unready_p50_s',
      'unready_p95_s',
      'max_not_ready',
      'cpu_s',
      'rss_mb',
      'in_place',
      'phases',
      'runs',
    ]);
    assert.deepEqual(checkTargets(file), { wallRatio: 0.75, unreadyP95: true, writesPerPod: true, inPlace: true });
    assert.equal(checkTargets({ ...file, rows: file.rows.slice(0, 1) }), undefined);
    const withFloor = peersFile({ pods: 100, maxUnavailable: 10, drainSeconds: 2, kubelet: 'real' }, [
      measurement('kruise', 10),
      measurement('minimal', 8.5),
      measurement('kwave', 9),
    ]);
    assert.deepEqual(
      withFloor.rows.map((r) => r.tool),
      ['kwave', 'kruise', 'minimal'],
    );
    assert.equal(checkTargets(withFloor)?.floorRatio, 0.85);
  });
});

describe("the peer benchmark's setting", () => {
  it('gives kwave a plan that loads: one wave of all, concurrency = maxUnavailable = M, drain D', () => {
    const loaded = loadPlanText(kwavePlan('kwave-1', { maxUnavailable: 20, drainSeconds: 2 }), 'peers.yaml');
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
    assert.equal(loaded.plan.strategy.concurrency, 20);
    assert.equal(loaded.plan.strategy.drainMs, 2000);
  });

  it("applies Kruise's rendered manifests without its workloads and webhook Service", () => {
    const kinds = ['Namespace', 'CustomResourceDefinition', 'Deployment', 'DaemonSet', 'Service', 'ClusterRole'];
    assert.deepEqual(
      installableManifests([...kinds.map((kind) => ({ kind })), null]).map((d) => d.kind),
      ['Namespace', 'CustomResourceDefinition', 'ClusterRole'],
    );
  });

  it("sizes nodes for maxPods beyond the fixture's own pods", () => {
    const capacity = nodePodCapacity({
      nodes: [{ name: 'a', maxPods: 2010 }, { name: 'b' }],
      workloads: [{ replicas: 3 } as never],
    });
    assert.deepEqual(
      [...capacity],
      [
        ['a', 2010],
        ['b', 1],
      ],
    );
  });
});
