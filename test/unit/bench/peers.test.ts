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
  o: { uid?: string; image?: string; digest?: string; restarts?: number; ready?: boolean } = {},
): PodVersion {
  return {
    metadata: { name, uid: o.uid ?? `uid-${name}` },
    spec: { containers: [{ name: 'nginx', image: o.image ?? 'nginx:1.14.2' }] },
    status: {
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      containerStatuses: [
        { name: 'nginx', imageID: `docker.io/library/nginx@${o.digest ?? OLD}`, restartCount: o.restarts ?? 0 },
      ],
    },
  };
}

const progressOf = (pods: PodVersion[]) =>
  new FleetProgress(pods, { container: 'nginx', toImage: 'nginx:1.25.3', toDigest: NEW, startedAt: 1000 });

/** One pod's in-place upgrade: drained at `at`, patched `drain` ms later, Ready on the new image 500 ms after that. */
function upgrade(p: FleetProgress, name: string, at: number, drain: number): void {
  p.observe(pod(name, { ready: false }), at);
  p.observe(pod(name, { ready: false, image: 'nginx:1.25.3' }), at + drain);
  p.observe(pod(name, { ready: false, image: 'nginx:1.25.3', digest: NEW, restarts: 1 }), at + drain + 400);
  p.observe(pod(name, { image: 'nginx:1.25.3', digest: NEW, restarts: 1 }), at + drain + 500);
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
      maxNotReady: 1,
      maxNotReadyByTool: 1,
    });
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
    ...o,
  };
}

describe('the rows and peers-N.json', () => {
  it('takes the median of each figure, in place only if every repeat was', () => {
    const row = peerRow([
      measurement('kwave', 12),
      measurement('kwave', 10, { writes: { accepted: 320, refused: 0, pods: 300 }, inPlace: false }),
      measurement('kwave', 11, { cpuSeconds: 1.234 }),
    ]);
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
    });
  });

  it("has exactly the issue's shape, a row per tool in a fixed order, and checks the targets", () => {
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
    ]);
    assert.deepEqual(checkTargets(file), { wallRatio: 0.75, unreadyP95: true, writesPerPod: true, inPlace: true });
    assert.equal(checkTargets({ ...file, rows: file.rows.slice(0, 1) }), undefined);
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
