// The real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler built from controlplane/) as the real kubectl sees it: server version, built-in
// namespaces, RBAC answers, TokenRequest, the audit log, controllers and scheduler at work; and
// no component outliving the process that started it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { connect } from '../../src/cluster/index.js';
import {
  readAudit,
  selectedRelease,
  skipUnlessControlPlane,
  startControlPlane,
  type ControlPlane,
} from './helpers/controlPlane.js';

const execFileP = promisify(execFile);
const VIEWER = 'kwave-test-nobody';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl; resolves with its exit code and output whatever the code. */
async function kubectl(kubeconfig: string, ...args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await execFileP('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` every 250 ms (bounded generously: the box is shared and slow). */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// Skipped per test, so each skip is counted in the summary with its reason.
const skip = skipUnlessControlPlane();

describe('the real control plane through the real kubectl', () => {
  let cp: ControlPlane;
  let work: string;
  let admin: string;
  let nobody: string;

  before(async () => {
    if (skip) return;
    cp = await startControlPlane({ users: [{ name: VIEWER }] });
    work = mkdtempSync(join(tmpdir(), 'kwave-cp-test-'));
    admin = join(work, 'admin.kubeconfig');
    nobody = join(work, 'nobody.kubeconfig');
    writeFileSync(admin, cp.kubeconfig());
    writeFileSync(nobody, cp.kubeconfig({ token: cp.tokens[VIEWER] }));
    // Start-up figures for the record (not asserted: the machine is shared).
    console.log(
      `# control plane ${cp.version}: /readyz after ${cp.timings.apiserverReadyMs} ms, controllers running after ${cp.timings.controllersReadyMs} ms`,
    );
  });

  after(async () => {
    await cp?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('kubectl version shows the real server version of the selected release', { skip }, async () => {
    const r = await kubectl(admin, 'version', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout) as { serverVersion: { gitVersion: string; major: string; minor: string } };
    const release = selectedRelease();
    assert.equal(v.serverVersion.gitVersion, release.version);
    assert.equal(v.serverVersion.gitVersion, cp.version);
    assert.equal(`${v.serverVersion.major}.${v.serverVersion.minor}`, release.minor);
  });

  test('kubectl get ns lists default and kube-system', { skip }, async () => {
    const r = await kubectl(admin, 'get', 'ns', '-o', 'name');
    assert.equal(r.code, 0, r.stderr);
    const names = r.stdout.trim().split('\n');
    assert.ok(names.includes('namespace/default'), r.stdout);
    assert.ok(names.includes('namespace/kube-system'), r.stdout);
  });

  test(
    'kubectl auth can-i patch pods/status: yes for the admin, no for a user RBAC grants nothing',
    { skip },
    async () => {
      const yes = await kubectl(admin, 'auth', 'can-i', 'patch', 'pods', '--subresource=status', '-n', 'default');
      assert.equal(yes.code, 0, yes.stderr);
      assert.equal(yes.stdout.trim(), 'yes');
      const no = await kubectl(nobody, 'auth', 'can-i', 'patch', 'pods', '--subresource=status', '-n', 'default');
      assert.equal(no.code, 1, no.stderr);
      assert.equal(no.stdout.trim(), 'no');
      const whoami = await kubectl(nobody, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}');
      assert.equal(whoami.stdout, VIEWER, whoami.stderr);
      const refused = await kubectl(nobody, 'get', 'pods', '-n', 'default');
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /forbidden: User "kwave-test-nobody" cannot list resource "pods"/);
    },
  );

  test(
    'a ServiceAccount gets a token through TokenRequest (kubectl create token) and it authenticates',
    { skip },
    async () => {
      assert.equal((await kubectl(admin, 'create', 'serviceaccount', 'token-test', '-n', 'default')).code, 0);
      const created = await kubectl(admin, 'create', 'token', 'token-test', '-n', 'default', '--duration=10m');
      assert.equal(created.code, 0, created.stderr);
      const token = created.stdout.trim();
      assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT');
      const asSa = join(work, 'sa.kubeconfig');
      writeFileSync(asSa, cp.kubeconfig({ token }));
      const whoami = await kubectl(asSa, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}');
      assert.equal(whoami.code, 0, whoami.stderr);
      assert.equal(whoami.stdout, 'system:serviceaccount:default:token-test');
      const denied = await kubectl(asSa, 'get', 'secrets', '-n', 'default');
      assert.match(
        denied.stderr,
        /forbidden: User "system:serviceaccount:default:token-test" cannot list resource "secrets"/,
      );
    },
  );

  test(
    'the audit log records each request with its user, verb, resource, subresource, namespace and code',
    { skip },
    async () => {
      assert.equal(
        (await kubectl(admin, 'create', 'configmap', 'audit-probe', '-n', 'default', '--from-literal=k=v')).code,
        0,
      );
      assert.equal((await kubectl(admin, 'label', 'configmap', 'audit-probe', '-n', 'default', 'probe=yes')).code, 0);
      const refused = await kubectl(nobody, 'get', 'configmap', 'audit-probe', '-n', 'default');
      assert.notEqual(refused.code, 0);
      // Blocking mode: each event is on disk once its response is, so no wait is needed.
      const records = readAudit(cp.auditLogPath);
      const probe = (r: (typeof records)[number]) => r.resource === 'configmaps' && r.name === 'audit-probe';
      const byAdmin = records
        .filter((r) => probe(r) && r.user === cp.adminUser)
        .map((r) => `${r.verb} ${r.namespace} ${r.code}`);
      // kubectl label reads the object, then patches it.
      assert.deepEqual(byAdmin, ['create default 201', 'get default 200', 'patch default 200']);
      const byNobody = records.filter((r) => probe(r) && r.user === VIEWER).map((r) => `${r.verb} ${r.code}`);
      assert.deepEqual(byNobody, ['get 403']);
      // Components write under their own names, and with a subresource where they use one.
      // --use-service-account-credentials: the controller-manager asks TokenRequest for a token per
      // controller, then each controller acts as its own service account.
      const tokenRequests = records.filter(
        (r) =>
          r.user === 'system:kube-controller-manager' &&
          r.verb === 'create' &&
          r.resource === 'serviceaccounts' &&
          r.subresource === 'token' &&
          r.namespace === 'kube-system',
      );
      assert.ok(
        tokenRequests.some((r) => r.name === 'namespace-controller' && r.code === 201),
        JSON.stringify(tokenRequests.map((r) => r.name)),
      );
      assert.ok(
        records.some((r) => r.user === 'system:kube-scheduler' && r.verb === 'watch' && r.resource === 'pods'),
        'the scheduler watches pods',
      );
    },
  );

  test(
    'the controllers and the scheduler run: a Deployment gets its ReplicaSet and pods, and the pods are found unschedulable without nodes',
    { skip },
    async () => {
      const configmap = await kubectl(
        admin,
        'get',
        'configmap',
        'kube-root-ca.crt',
        '-n',
        'default',
        '-o',
        'jsonpath={.data.ca\\.crt}',
      );
      assert.equal(configmap.stdout.trim(), cp.caPem.trim(), 'root-ca publisher writes --root-ca-file');
      assert.equal(
        (
          await kubectl(
            admin,
            'create',
            'deployment',
            'web',
            '-n',
            'default',
            '--image=registry.example/web:1',
            '--replicas=2',
          )
        ).code,
        0,
      );
      const pods = await eventually('the ReplicaSet controller to create 2 pods', async () => {
        const r = await kubectl(admin, 'get', 'pods', '-n', 'default', '-l', 'app=web', '-o', 'json');
        const list = JSON.parse(r.stdout) as {
          items: {
            metadata: { name: string; ownerReferences?: { kind: string }[] };
            status: { conditions?: { type: string; status: string; reason?: string }[] };
          }[];
        };
        return list.items.length === 2 ? list.items : undefined;
      });
      for (const pod of pods) assert.equal(pod.metadata.ownerReferences?.[0]?.kind, 'ReplicaSet');
      const creators = readAudit(cp.auditLogPath).filter(
        (r) => r.verb === 'create' && r.resource === 'pods' && r.namespace === 'default' && r.code === 201,
      );
      assert.deepEqual(
        [...new Set(creators.map((r) => r.user))],
        ['system:serviceaccount:kube-system:replicaset-controller'],
        'each controller acts as its own service account',
      );
      await eventually('the scheduler to mark the pods Unschedulable (there are no nodes)', async () => {
        const r = await kubectl(
          admin,
          'get',
          'pods',
          '-n',
          'default',
          '-l',
          'app=web',
          '-o',
          'jsonpath={range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].reason}{"\\n"}{end}',
        );
        const reasons = r.stdout.trim().split('\n');
        return reasons.length === 2 && reasons.every((x) => x === 'Unschedulable') ? true : undefined;
      });
    },
  );

  test(
    'restartEtcd(): etcd is stopped and started again with its data; kube-apiserver reconnects and serves what was written',
    { skip },
    async () => {
      const created = await kubectl(
        admin,
        'create',
        'configmap',
        'before-etcd-restart',
        '-n',
        'default',
        '--from-literal=k=v',
      );
      assert.equal(created.code, 0, created.stderr);
      const etcdPid = cp.pids().etcd;
      await cp.restartEtcd();
      assert.notEqual(cp.pids().etcd, etcdPid, 'a new etcd process');
      assert.ok(etcdPid !== undefined && !isAlive(etcdPid), 'the old one ended');
      const read = await eventually('kube-apiserver to read through the new etcd', async () => {
        const r = await kubectl(
          admin,
          'get',
          'configmap',
          'before-etcd-restart',
          '-n',
          'default',
          '-o',
          'jsonpath={.data.k}',
        );
        return r.code === 0 ? r.stdout : undefined;
      });
      assert.equal(read, 'v');
      const written = await kubectl(admin, 'create', 'configmap', 'after-etcd-restart', '-n', 'default');
      assert.equal(written.code, 0, written.stderr);
    },
  );

  test('kwave reads from discovery that the server serves pods/resize', { skip }, async () => {
    const cluster = connect({ kubeconfig: admin, env: {} });
    try {
      assert.equal(await cluster.servesPodResize(), true);
      assert.equal(cluster.requests.snapshot()['get discovery 200'], 1);
    } finally {
      cluster.close();
    }
  });

  test(
    'with the InPlacePodVerticalScaling gate off (1.33; locked on from 1.35) the server serves no pods/resize, and kwave sees that',
    { skip: skip || (selectedRelease().minor === '1.33' ? false : 'the gate can be turned off on 1.33 only') },
    async () => {
      const other = await startControlPlane({
        controllers: false,
        extraArgs: { apiserver: ['--feature-gates=InPlacePodVerticalScaling=false'] },
      });
      const file = join(work, 'gate-off.kubeconfig');
      writeFileSync(file, other.kubeconfig());
      const cluster = connect({ kubeconfig: file, env: {} });
      try {
        assert.equal(await cluster.servesPodResize(), false);
      } finally {
        cluster.close();
        await other.close();
      }
    },
  );

  test('close() stops every component', { skip }, async () => {
    const other = await startControlPlane({ controllers: false });
    const pids = Object.values(other.pids());
    assert.equal(pids.length, 2, 'etcd and apiserver');
    await other.close();
    for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} still runs`);
  });
});

describe('a SIGKILLed parent leaves no control plane behind', () => {
  test('every component ends when its parent is killed with SIGKILL', { skip }, async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'helpers', 'controlPlaneChild.ts'), '--controllers'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the parent exited (${code}) before starting the control plane`)));
    });
    const { pids, dir } = JSON.parse(line) as { pids: Record<string, number>; dir: string };
    assert.deepEqual(Object.keys(pids).sort(), ['apiserver', 'controller-manager', 'etcd', 'scheduler']);
    child.kill('SIGKILL');
    await eventually('every component to end', () => (Object.values(pids).some(isAlive) ? undefined : true));
    rmSync(dir, { recursive: true, force: true }); // a killed parent cannot clean up its folder
  });
});
