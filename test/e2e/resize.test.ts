// In-place resize in waves (docs/rollout.md, "Resize"), through the real `kwave run` against the
// backend KWAVE_TEST_BACKEND names: CPU and memory changed through `pods/resize`, proven by the
// kubelet's own status; a resize that restarts nothing never takes a pod out of service; one whose
// resizePolicy restarts the container is drained once; a resize the node can never hold halts and
// is resized back; one the node has no room for now fails at podTimeout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { exitOf, startFleet, type Fleet } from './helpers/rolloutCli.js';
import { clusterReader } from './helpers/clusterRead.js';
import { BACKEND } from './helpers/backend.js';
import { selectedRelease } from './helpers/controlPlane.js';

/** The embedded API server is 1.33's; newer real ones (1.37) refuse an infeasible resize at admission. */
const serverRefusesInfeasible = BACKEND !== 'embedded' && selectedRelease().minor !== '1.33';

const FIXTURE = `
apiVersion: kwave.dev/v1alpha1
kind: SimFixture
nodes:
  - { name: node-1, zone: zone-a }
  - { name: node-2, zone: zone-b }
  - { name: node-3, zone: zone-c }
  - { name: node-4, zone: zone-d, capacity: { cpu: "1", memory: 8Gi } }
workloads:
  - name: web
    replicas: 30
    nodes: [node-1, node-2, node-3]
    containers: [{ name: nginx, image: "nginx:1.14.2", resources: { requests: { cpu: 100m, memory: 128Mi } } }]
  - name: mem
    replicas: 2
    nodes: [node-1, node-2]
    containers:
      - name: nginx
        image: "nginx:1.14.2"
        resources: { requests: { cpu: 100m, memory: 128Mi }, limits: { memory: 256Mi } }
        resizePolicy: [{ resourceName: memory, restartPolicy: RestartContainer }]
  - name: huge
    replicas: 2
    nodes: [node-3]
    containers: [{ name: nginx, image: "nginx:1.14.2", resources: { requests: { cpu: 100m, memory: 128Mi } } }]
  - name: tight
    replicas: 2
    nodes: [node-4]
    containers: [{ name: nginx, image: "nginx:1.14.2", resources: { requests: { cpu: 400m, memory: 128Mi } } }]
`;

interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

interface PodFacts {
  uid: string;
  restartCount: number;
  ready: boolean;
  spec: Resources;
  status: Resources | undefined;
  gate: string | undefined;
}

function resizePlan(name: string, app: string, resources: Resources, strategy: Record<string, unknown>, extra = {}) {
  return stringify({
    apiVersion: 'kwave.dev/v1alpha1',
    kind: 'RolloutPlan',
    metadata: { name },
    spec: {
      target: { namespace: 'default', selector: { matchLabels: { app } } },
      update: { containers: [{ name: 'nginx', resources, ...extra }] },
      strategy,
      failurePolicy: { maxFailed: 0, rollback: 'failed' },
    },
  });
}

describe('kwave run: in-place resize in waves', () => {
  let fleet: Fleet;
  let facts: (app: string) => Promise<Map<string, PodFacts>>;
  before(async () => {
    fleet = await startFleet({ fixture: FIXTURE, timeScale: 0.3 });
    const reader = clusterReader(fleet.kubeconfig);
    facts = async (app) => {
      const out = new Map<string, PodFacts>();
      for (const p of await reader.pods('default', `app=${app}`)) {
        const cs = p.status?.containerStatuses?.find((c) => c.name === 'nginx');
        const c = p.spec?.containers.find((x) => x.name === 'nginx');
        out.set(p.metadata!.name!, {
          uid: p.metadata!.uid!,
          restartCount: cs?.restartCount ?? -1,
          ready: p.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True',
          spec: (c?.resources ?? {}) as Resources,
          status: cs?.resources as Resources | undefined,
          gate: p.status?.conditions?.find((x) => x.type === 'kwave.dev/in-place-ready')?.status,
        });
      }
      return out;
    };
  });
  after(async () => fleet?.close());

  test('30 pods resized in 3 waves with NotRequired: resources proven, no restart, never not Ready, 2 writes a pod', async () => {
    const before = await facts('web');
    assert.equal(before.size, 30);
    const plan = await fleet.writePlan(
      'web.yaml',
      resizePlan('web', 'web', { requests: { cpu: '250m', memory: '256Mi' } }, { waveSize: 10, concurrency: 5 }),
    );
    await fleet.resetStats();
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);
    const waves = run.events.flatMap((e) => (e.event === 'wave-start' ? [e.pods] : []));
    assert.deepEqual(waves, [10, 10, 10]);
    const ends = run.events.filter((e) => e.event === 'pod-end');
    assert.equal(ends.length, 30);
    assert.ok(
      ends.every((e) => e.event === 'pod-end' && e.result === 'upgraded'),
      JSON.stringify(ends[0]),
    );

    const after = await facts('web');
    for (const [name, p] of after) {
      const was = before.get(name)!;
      assert.equal(p.uid, was.uid, `${name} uid`);
      assert.equal(p.restartCount, was.restartCount, `${name} restartCount`);
      assert.ok(p.ready, `${name} Ready`);
      assert.deepEqual(p.spec.requests, { cpu: '250m', memory: '256Mi' }, `${name} spec`);
      assert.deepEqual(p.status?.requests, { cpu: '250m', memory: '256Mi' }, `${name} status resources`);
    }
    const stats = await fleet.stats();
    assert.equal(stats.maxNotReady.default ?? 0, 0, 'never a pod not Ready');
    // Per pod: the state annotation (patch pods), the resize (patch pods/resize); no gate write.
    assert.equal(stats.requests['patch pods'], 30);
    assert.equal(stats.requests['patch pods/resize'], 30);
    assert.equal(stats.requests['patch pods/status'] ?? 0, 0);
  });

  test('a memory-limit resize with RestartContainer: drained, restarted once, proven, Ready', async () => {
    const before = await facts('mem');
    const plan = await fleet.writePlan(
      'mem.yaml',
      resizePlan('mem', 'mem', { limits: { memory: '512Mi' } }, { waves: ['100%'], concurrency: 1 }),
    );
    await fleet.resetStats();
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 0, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);
    const after = await facts('mem');
    for (const [name, p] of after) {
      const was = before.get(name)!;
      assert.equal(p.uid, was.uid);
      assert.equal(p.restartCount, was.restartCount + 1, `${name} restarted once`);
      assert.ok(p.ready && p.gate === 'True', `${name} Ready, gate open`);
      assert.deepEqual(p.status?.limits, { memory: '512Mi' });
      assert.deepEqual(p.status?.requests, { cpu: '100m', memory: '128Mi' });
    }
    const stats = await fleet.stats();
    assert.equal(stats.maxNotReady.default, 1, 'drained one at a time');
    // Per pod: close the gate, the state, the resize, open the gate.
    assert.equal(stats.requests['patch pods/status'], 4);
    assert.equal(stats.requests['patch pods'], 2);
    assert.equal(stats.requests['patch pods/resize'], 2);
  });

  test('an Infeasible resize halts at once (ResizeInfeasible) and is resized back to the recorded resources', async () => {
    const plan = await fleet.writePlan(
      'huge.yaml',
      resizePlan('huge', 'huge', { requests: { memory: '64Gi' } }, { waves: ['100%'], concurrency: 1 }),
    );
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 3, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);
    const failed = run.events.find((e) => e.event === 'pod-end' && e.result === 'failed');
    assert.ok(failed && failed.event === 'pod-end');
    assert.equal(failed.reason, 'ResizeInfeasible', failed.message);
    assert.match(
      failed.message,
      serverRefusesInfeasible
        ? /the resize was refused \(HTTP 403\): pods "huge-\d" is forbidden: node didn't have enough allocatable resources: memory, requested: 68719476736, allocatable: 34359738368/
        : /Node didn't have enough capacity: memory, requested: 68719476736, capacity: 34359738368/,
    );
    // The rollback of the failed pod: resized back where the kubelet had the target in its spec;
    // where the server refused the resize, the pod never left its recorded resources, and the
    // rollback finds it there (proven from spec and status) with nothing to write.
    const rollback = run.events.filter((e) => e.event === 'pod-end' && e.result !== 'failed');
    assert.deepEqual(
      rollback.map((e) => (e.event === 'pod-end' ? [e.pod, e.result, e.reason] : [])),
      [[failed.pod, ...(serverRefusesInfeasible ? ['skipped', 'AtTarget'] : ['rolled-back', undefined])]],
    );
    for (const p of (await facts('huge')).values()) {
      assert.deepEqual(p.spec.requests, { cpu: '100m', memory: '128Mi' });
      assert.deepEqual(p.status?.requests, { cpu: '100m', memory: '128Mi' });
      assert.ok(p.ready);
    }
  });

  test('a full node defers the resize: ResizeDeferred at podTimeout, then resized back', async () => {
    const plan = await fleet.writePlan(
      'tight.yaml',
      resizePlan(
        'tight',
        'tight',
        { requests: { cpu: '700m' } },
        { waves: ['100%'], concurrency: 1, podTimeout: '3s' },
      ),
    );
    const run = fleet.start(['run', plan]);
    const exit = await exitOf(run);
    assert.equal(exit.code, 3, `exit ${exit.code}\n${run.stderr()}\n${run.stdout().slice(-2000)}`);
    const failed = run.events.find((e) => e.event === 'pod-end' && e.result === 'failed');
    assert.ok(failed && failed.event === 'pod-end');
    assert.equal(failed.reason, 'ResizeDeferred');
    assert.match(failed.message, /Node didn't have enough resource: cpu, requested: 700, used: 400, capacity: 1000/);
    for (const p of (await facts('tight')).values()) {
      assert.deepEqual(p.spec.requests, { cpu: '400m', memory: '128Mi' });
      assert.deepEqual(p.status?.requests, { cpu: '400m', memory: '128Mi' });
    }
  });

  test('kwave plan of an image + resize plan: per pod the resources now and after, and the restart', async () => {
    const plan = await fleet.writePlan(
      'mixed.yaml',
      resizePlan('mixed', 'mem', { limits: { memory: '1Gi' } }, { waves: ['100%'] }, { image: 'nginx:1.25.3' }),
    );
    const r = await fleet.kwave(['plan', plan]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /update: nginx → nginx:1\.25\.3 \+ limits memory=1Gi/);
    assert.match(
      r.stdout,
      /default\/mem-0 .*nginx: requests cpu=100m memory=128Mi, limits memory=512Mi → requests cpu=100m memory=128Mi, limits memory=1Gi \(restarts the container\)/,
    );
    process.stdout.write(`# kwave plan output:\n${r.stdout.replace(/^/gm, '#   ')}\n`);
  });
});
