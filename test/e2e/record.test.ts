// The rollout record and the run lock against the simulated cluster, over HTTPS with the
// kubeconfig it writes; `kwave approve` and `kwave status` as the real CLI (`node bin/kwave.js`,
// built by `npm run build`, which `npm test` runs first).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { V1MicroTime } from '@kubernetes/client-node';
import type { Cluster } from '../../src/cluster/cluster.js';
import { connect } from '../../src/cluster/connect.js';
import { KwaveError } from '../../src/errors.js';
import { loadPlanFile } from '../../src/plan/load.js';
import type { Plan } from '../../src/plan/types.js';
import type { RolloutEventBody } from '../../src/rollout/events.js';
import { newRecord, type RolloutRecord } from '../../src/record/record.js';
import { applyEvent } from '../../src/record/reducer.js';
import { approvalKey } from '../../src/record/codec.js';
import { RecordStore } from '../../src/record/store.js';
import { RunLock } from '../../src/lease/runLock.js';
import { runnerIdentity } from '../../src/lease/runnerIdentity.js';
import { startTestSim, type TestSim } from './helpers/backend.js';
import { CHILD_LIMITS, ROOT } from './helpers/kwaveBin.js';
import { planYaml } from './helpers/plans.js';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function kwave(...args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['bin/kwave.js', ...args], {
      cwd: ROOT,
      ...CHILD_LIMITS,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Waits (up to 20 s) until `check` holds; for things that happen asynchronously, not for timing. */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Fails the test instead of hanging when `promise` never settles. */
async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 20_000)),
  );
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `ok()` holds (checked every 20 ms), failing after 30 s: an event, with a bound. */
async function until(ok: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let sim: TestSim;
let dir: string;
let kubeconfig: string;
let cluster: Cluster;

async function plan(name: string): Promise<{ file: string; plan: Plan }> {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, planYaml({ name, waves: '[1, "100%"]', gates: [{ name: 'sign-off', approval: true }] }));
  const loaded = await loadPlanFile(file);
  assert.ok(loaded.ok);
  return { file, plan: loaded.ok ? loaded.plan : undefined! };
}

function recordFor(p: Plan, holder = 'test@host pid 1'): RolloutRecord {
  return newRecord({
    plan: p.name,
    revision: p.revision,
    planText: p.source.text,
    holder,
    now: new Date().toISOString(),
  });
}

function event(p: Plan, body: RolloutEventBody) {
  return { time: new Date().toISOString(), plan: p.name, ...body } as Parameters<typeof applyEvent>[1];
}

const rolloutStart = (p: Plan): RolloutEventBody => ({
  event: 'rollout-start',
  revision: p.revision,
  direction: 'upgrade',
  selected: 2,
  alreadyDone: 0,
  waves: 2,
  deferred: 0,
  budget: 1,
  concurrency: 1,
  resumed: false,
});

before(async () => {
  sim = await startTestSim({ pods: 2 });
  dir = mkdtempSync(path.join(tmpdir(), 'kwave-record-e2e-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, sim.kubeconfig(), { mode: 0o600 });
  cluster = connect({ kubeconfig });
});

after(async () => {
  cluster.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('run lock (Lease kwave-<plan>)', () => {
  test('acquire; a second runner is refused naming the holder; release frees it', async () => {
    const a = new RunLock(cluster, { namespace: 'default', plan: 'lock-a', identity: 'alice@host pid 100' });
    await a.acquire();
    const lease = await cluster.getLease('default', 'kwave-lock-a');
    assert.equal(lease.spec?.holderIdentity, 'alice@host pid 100');
    const b = new RunLock(cluster, { namespace: 'default', plan: 'lock-a', identity: 'bob@host pid 200' });
    await assert.rejects(
      b.acquire(),
      (err: unknown) => err instanceof KwaveError && err.code === 'LOCKED' && /alice@host pid 100/.test(err.message),
    );
    await a.release();
    assert.equal((await cluster.getLease('default', 'kwave-lock-a')).spec?.holderIdentity, undefined);
    await b.acquire();
    await b.release();
  });

  test('an expired lease is taken over (leaseTransitions + 1)', async () => {
    const old = new Date(Date.now() - 60_000);
    await cluster.createLease('default', {
      metadata: { name: 'kwave-lock-b' },
      spec: {
        holderIdentity: 'crashed@host pid 9',
        leaseDurationSeconds: 15,
        acquireTime: new V1MicroTime(old),
        renewTime: new V1MicroTime(old),
        leaseTransitions: 2,
      },
    });
    const b = new RunLock(cluster, { namespace: 'default', plan: 'lock-b', identity: 'bob@host pid 200' });
    await b.acquire();
    const lease = await cluster.getLease('default', 'kwave-lock-b');
    assert.equal(lease.spec?.holderIdentity, 'bob@host pid 200');
    assert.equal(lease.spec?.leaseTransitions, 3);
    await b.release();
  });

  test('the fresh lease of a runner killed on this host is taken over at once', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid; // a process that has ended
    const now = new Date();
    await cluster.createLease('default', {
      metadata: { name: 'kwave-lock-d' },
      spec: {
        holderIdentity: runnerIdentity(dead).replace(/^\S+@/, 'killed@'),
        leaseDurationSeconds: 15,
        acquireTime: new V1MicroTime(now),
        renewTime: new V1MicroTime(now),
        leaseTransitions: 0,
      },
    });
    const b = new RunLock(cluster, { namespace: 'default', plan: 'lock-d', identity: 'bob@host pid 200' });
    await b.acquire();
    assert.equal((await cluster.getLease('default', 'kwave-lock-d')).spec?.holderIdentity, 'bob@host pid 200');
    await b.release();
  });

  test('renewals move renewTime on; a runner whose lease was taken hears of it', async () => {
    let lostMessage: string | undefined;
    const a = new RunLock(cluster, {
      namespace: 'default',
      plan: 'lock-c',
      identity: 'alice@host pid 100',
      durationSeconds: 3,
      onLost: (m) => (lostMessage = m),
    });
    await a.acquire();
    const first = (await cluster.getLease('default', 'kwave-lock-c')).spec?.renewTime?.getTime() ?? 0;
    await eventually(
      async () => ((await cluster.getLease('default', 'kwave-lock-c')).spec?.renewTime?.getTime() ?? 0) > first,
      'a renewal',
    );
    // Another runner writes the lease (as if it had taken it over).
    const cur = await cluster.getLease('default', 'kwave-lock-c');
    await cluster.updateLease('default', { ...cur, spec: { ...cur.spec, holderIdentity: 'mallory@host pid 3' } });
    await eventually(() => lostMessage !== undefined, 'onLost');
    assert.match(lostMessage!, /another runner took it over/);
    await a.release();
    assert.equal((await cluster.getLease('default', 'kwave-lock-c')).spec?.holderIdentity, 'mallory@host pid 3');
  });
});

describe('rollout record (ConfigMap kwave-<plan>)', () => {
  test('save and load round trip; labels and keys as documented', async () => {
    const { plan: p } = await plan('rec-a');
    const store = new RecordStore(cluster, { namespace: 'default', plan: p.name });
    assert.equal(await store.load(), undefined);
    await store.create(applyEvent(recordFor(p), event(p, rolloutStart(p))));
    const loaded = await store.load();
    assert.ok(loaded?.ok);
    if (loaded?.ok) {
      assert.equal(loaded.record.phase, 'Progressing');
      assert.equal(loaded.record.planText, p.source.text);
      assert.equal(loaded.record.revision, p.revision);
    }
    const cm = await cluster.getConfigMap('default', 'kwave-rec-a');
    assert.deepEqual(Object.keys(cm.data ?? {}).sort(), ['plan.yaml', 'status.json']);
    assert.equal(cm.metadata?.labels?.['app.kubernetes.io/managed-by'], 'kwave');
    assert.equal(cm.metadata?.labels?.['kwave.dev/plan'], 'rec-a');
  });

  test('throttled: 50 pod events make no write until the flush, then one', async () => {
    const { plan: p } = await plan('rec-b');
    const store = new RecordStore(cluster, { namespace: 'default', plan: p.name, throttleMs: 60_000 });
    await store.create(applyEvent(recordFor(p), event(p, rolloutStart(p))));
    const updates = () => cluster.requests.total({ verb: 'update', resource: 'configmaps' });
    const before = updates();
    for (let i = 0; i < 25; i++) {
      await store.apply(event(p, { event: 'pod-start', wave: 1, pod: `default/p${i}` }));
      await store.apply(event(p, { event: 'pod-step', wave: 1, pod: `default/p${i}`, step: 'patched', message: '' }));
    }
    assert.equal(updates() - before, 0);
    await store.flush();
    assert.equal(updates() - before, 1);
    const loaded = await store.load();
    assert.ok(loaded?.ok && loaded.record.inFlight.length === 25);
    store.close();
  });

  test("kwave approve writes the decisions ConfigMap (who, as the API server named them) and wakes waitForApproval; the record's writes never meet it", async () => {
    const { file, plan: p } = await plan('rec-c');
    const store = new RecordStore(cluster, { namespace: 'default', plan: p.name, throttleMs: 0 });
    let r = applyEvent(recordFor(p), event(p, rolloutStart(p)));
    await store.create(r);
    // Nothing waits yet: approve without --wave is refused.
    const early = await kwave('approve', file, '--kubeconfig', kubeconfig);
    assert.equal(early.code, 2, early.stderr);
    assert.match(early.stderr, /no wave of plan rec-c is waiting for approval/);

    r = applyEvent(r, event(p, { event: 'gate-approval-wait', wave: 1, gate: 'sign-off' }));
    await store.save(r, { flush: true });
    const waiter = new RecordStore(cluster, { namespace: 'default', plan: p.name });
    const abort = new AbortController();
    const absent = () => cluster.requests.total({ verb: 'get', resource: 'configmaps', code: '404' });
    const absentBefore = absent();
    const waiting = waiter.waitForApproval(1, abort.signal);
    let settled = false;
    void waiting.then(() => (settled = true));
    // The waiter has read the decisions ConfigMap (not there yet) and still waits: a waiter that
    // took any change for an approval would have resolved by then.
    await until(() => absent() > absentBefore, 'the waiter to read the decisions ConfigMap');
    assert.equal(settled, false, 'not approved yet');

    const conflicts = () => cluster.requests.total({ verb: 'update', resource: 'configmaps', code: '409' });
    const conflictsBefore = conflicts();
    const approved = await kwave('approve', file, '--kubeconfig', kubeconfig);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /^approved wave 1 of plan rec-c \(by kwave-admin \(.+@.+\)\)$/m);
    const approval = await withTimeout(waiting, 'waitForApproval');
    assert.ok(approval, 'waitForApproval resolved with the approval');
    assert.equal(approval.revision, p.revision);
    assert.equal(approval.user, 'kwave-admin', "the SelfSubjectReview's name for the approver");
    assert.equal((await waiter.isApproved(1))?.by, approval.by);
    const decisions = await cluster.getConfigMap('default', 'kwave-rec-c.control');
    assert.ok(decisions.data?.[approvalKey(1)]);

    // The runner's next write does not meet the approval: it lives in a ConfigMap of its own.
    await store.save(
      applyEvent(
        r,
        event(p, {
          event: 'gate-end',
          wave: 1,
          gate: 'sign-off',
          result: 'passed',
          message: `approved by ${approval.by}`,
        }),
      ),
      { flush: true },
    );
    assert.equal(conflicts() - conflictsBefore, 0, 'no write met another');
    const cm = await cluster.getConfigMap('default', 'kwave-rec-c');
    assert.equal(cm.data?.[approvalKey(1)], undefined, 'the record holds no decision');
    assert.match(cm.data?.['status.json'] ?? '', /approved by/);

    const again = await kwave('approve', file, '--wave', '1', '--kubeconfig', kubeconfig, '-o', 'json');
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      (({ alreadyApproved, user }) => ({ alreadyApproved, user }))(JSON.parse(again.stdout) as Record<string, unknown>),
      { alreadyApproved: true, user: 'kwave-admin' },
    );
    const tooFar = await kwave('approve', file, '--wave', '7', '--kubeconfig', kubeconfig);
    assert.equal(tooFar.code, 2);
  });

  test('waitForApproval returns undefined when aborted', async () => {
    const { plan: p } = await plan('rec-d');
    const store = new RecordStore(cluster, { namespace: 'default', plan: p.name });
    await store.create(recordFor(p));
    const abort = new AbortController();
    const waiting = store.waitForApproval(2, abort.signal);
    abort.abort();
    assert.equal(await withTimeout(waiting, 'the aborted wait'), undefined);
  });

  test('approve and status of a plan never run: exit 2 naming the namespace', async () => {
    const { file } = await plan('never-run');
    const approve = await kwave('approve', file, '--kubeconfig', kubeconfig);
    assert.equal(approve.code, 2);
    assert.match(approve.stderr, /plan never-run has not been run in namespace default/);
    const status = await kwave('status', file, '--kubeconfig', kubeconfig);
    assert.equal(status.code, 2);
    assert.match(status.stderr, /plan never-run has not been run in namespace default/);
  });

  test('kwave status prints the record and the lock holder; -o json gives one object', async () => {
    const { file, plan: p } = await plan('rec-e');
    const store = new RecordStore(cluster, { namespace: 'default', plan: p.name });
    let r = applyEvent(recordFor(p), event(p, rolloutStart(p)));
    r = applyEvent(r, event(p, { event: 'wave-start', wave: 1, waves: 2, pods: 1, target: 1 }));
    r = applyEvent(r, event(p, { event: 'pod-start', wave: 1, pod: 'default/demo-0' }));
    r = applyEvent(
      r,
      event(p, { event: 'pod-step', wave: 1, pod: 'default/demo-0', step: 'gate-closed', message: '' }),
    );
    await store.create(r);
    const lock = new RunLock(cluster, { namespace: 'default', plan: p.name, identity: 'carol@box pid 77' });
    await lock.acquire();
    try {
      const text = await kwave('status', file, '--kubeconfig', kubeconfig);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^plan rec-e \(revision [0-9a-f]{10}, upgrade\) in namespace default: Progressing$/m);
      assert.match(text.stdout, /^wave 1 of 2 /m);
      assert.match(text.stdout, /^pods: 0 upgraded, 1 in progress, 1 pending/m);
      assert.match(text.stdout, /^ {2}default\/demo-0 {2}wave 1 {2}gate-closed {2}(?:\d+[hms])+$/m);
      assert.match(text.stdout, /^lock: held by carol@box pid 77 /m);
      const json = await kwave('status', file, '--kubeconfig', kubeconfig, '-o', 'json');
      assert.equal(json.code, 0, json.stderr);
      const lines = json.stdout.trim().split('\n');
      assert.equal(lines.length, 1);
      const obj = JSON.parse(lines[0]!);
      assert.equal(obj.phase, 'Progressing');
      assert.equal(obj.lock.holder, 'carol@box pid 77');
      assert.equal(obj.inFlight[0].pod, 'default/demo-0');
    } finally {
      await lock.release();
    }
  });

  test('kwave status --watch prints each new state until SIGINT', async () => {
    const { file, plan: p } = await plan('rec-f');
    const store = new RecordStore(cluster, { namespace: 'default', plan: p.name, throttleMs: 0 });
    let r = applyEvent(recordFor(p), event(p, rolloutStart(p)));
    await store.create(r);
    const child = spawn(
      process.execPath,
      ['bin/kwave.js', 'status', file, '--watch', '-o', 'json', '--kubeconfig', kubeconfig],
      { cwd: ROOT, ...CHILD_LIMITS },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    try {
      const states = () =>
        out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { wave: number; phase: string });
      await eventually(() => states().length >= 1, 'the first state');
      assert.equal(states()[0]?.wave, 0);
      r = applyEvent(r, event(p, { event: 'wave-start', wave: 1, waves: 2, pods: 1, target: 1 }));
      await store.save(r, { flush: true });
      await eventually(() => states().some((s) => s.wave === 1), 'the wave-1 state');
      r = applyEvent(
        r,
        event(p, { event: 'rollout-end', phase: 'Completed', exitCode: 0, message: 'done', waves: [], durationMs: 1 }),
      );
      await store.save(r, { flush: true });
      await eventually(() => states().some((s) => s.phase === 'Completed'), 'the Completed state');
    } finally {
      child.kill('SIGINT');
    }
    assert.equal(await exited, 0);
  });
});
