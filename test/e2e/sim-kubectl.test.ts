// Fidelity of the API server as users drive it: the real kubectl with the kubeconfig the backend
// writes (embedded: the simulator's API server; real: kube-apiserver with no kubelet).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { missing } from './helpers/prerequisites.js';
import { startApiOnly, type ApiOnly } from './helpers/apiOnly.js';

const run = promisify(execFile);
const SMP = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

const kubectlVersion = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
const kubectlFound = kubectlVersion.status === 0;
/** The client's minor version (Debian's kubernetes-client is 1.20; this machine's may be 1.32). */
const kubectlMinor = kubectlFound
  ? Number.parseInt((JSON.parse(kubectlVersion.stdout) as { clientVersion: { minor: string } }).clientVersion.minor, 10)
  : 0;

const skip = missing('kubectl');
describe('simulated kube-apiserver through the real kubectl', () => {
  let sim: ApiOnly;
  let core: CoreV1Api;
  const kubectl = (...args: string[]) =>
    run(
      'kubectl',
      ['--kubeconfig', sim.kubeconfigPath, '--cache-dir', `${sim.dir}/cache`, '--request-timeout=20s', ...args],
      { timeout: 30_000, encoding: 'utf8' },
    );

  before(async () => {
    if (skip) return;
    sim = await startApiOnly();
    core = sim.kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await sim.putRunningPod(`demo-${i}`, { labels: { app: 'demo' } });
    await sim.putRunningPod('loner', { nodeName: '', labels: { app: 'other' } });
  });
  after(async () => {
    if (skip) return;
    await sim.close();
  });

  test('get prints the pod table a real cluster prints', { skip }, async () => {
    const { stdout } = await kubectl('get', 'pods');
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    assert.match(lines[1]!, /^demo-0\s+1\/1\s+Running\s+0\s+\d+s$/);
    const wide = await kubectl('get', 'pods', '-o', 'wide', '-l', 'app in (demo)');
    assert.match(wide.stdout, /IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/);
    assert.match(wide.stdout, /demo-2\s+1\/1\s+Running\s+0\s+\S+\s+10\.0\.0\.10\s+node-a\s+<none>\s+1\/1/);
  });

  test('get -o json returns the objects', { skip }, async () => {
    const { stdout } = await kubectl('get', 'pod', 'demo-1', '-o', 'json');
    const pod = JSON.parse(stdout) as V1Pod;
    assert.equal(pod.kind, 'Pod');
    assert.equal(pod.metadata!.name, 'demo-1');
    const list = JSON.parse((await kubectl('get', 'pods', '-o', 'json', '-l', 'app')).stdout) as { items: V1Pod[] };
    assert.equal(list.items.length, 4);
  });

  test('patch an image (strategic merge), then "(no change)" for the same patch', { skip }, async () => {
    const patch = '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.25.3"}]}}';
    assert.equal((await kubectl('patch', 'pod', 'demo-0', '-p', patch)).stdout.trim(), 'pod/demo-0 patched');
    assert.equal(
      ((await sim.getPod('demo-0'))!.spec as { containers: { image: string }[] }).containers[0]!.image,
      'nginx:1.25.3',
    );
    assert.equal(
      (await kubectl('patch', 'pod', 'demo-0', '-p', patch)).stdout.trim(),
      'pod/demo-0 patched (no change)',
    );
  });

  test('a forbidden patch fails with the server message', { skip }, async () => {
    await assert.rejects(
      kubectl('patch', 'pod', 'demo-0', '-p', '{"spec":{"nodeName":"elsewhere"}}'),
      (err: { stderr: string }) => {
        assert.match(
          err.stderr,
          /The Pod "demo-0" is invalid: spec: Forbidden: pod updates may not change fields other than/,
        );
        return true;
      },
    );
  });

  test('label and annotate (merge patches), including removal', { skip }, async () => {
    assert.equal((await kubectl('label', 'pod', 'demo-1', 'tier=web')).stdout.trim(), 'pod/demo-1 labeled');
    assert.equal((await kubectl('annotate', 'pod', 'demo-1', 'note=hello')).stdout.trim(), 'pod/demo-1 annotated');
    let pod = (await sim.getPod('demo-1'))!;
    assert.equal(pod.metadata.labels!.tier, 'web');
    assert.equal(pod.metadata.annotations!.note, 'hello');
    await kubectl('label', 'pod', 'demo-1', 'tier-');
    pod = (await sim.getPod('demo-1'))!;
    assert.equal(pod.metadata.labels!.tier, undefined);
    assert.equal((await kubectl('get', 'pods', '-l', 'note', '-o', 'name')).stdout.trim(), '');
  });

  test('get -w prints the table, then a row per change', { skip }, async () => {
    const child = spawn(
      'kubectl',
      ['--kubeconfig', sim.kubeconfigPath, '--cache-dir', `${sim.dir}/cache`, 'get', 'pods', '-w', '-l', 'app=demo'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const seen = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`kubectl get -w printed:\n${out}`)), 15_000);
        const check = () => {
          if (re.test(out)) {
            clearTimeout(timer);
            child.stdout.off('data', check);
            resolve();
          }
        };
        child.stdout.on('data', (d: Buffer) => {
          out += String(d);
          check();
        });
        check();
      });
    try {
      await seen(/demo-2\s+1\/1\s+Running/);
      await core.patchNamespacedPodStatus(
        {
          name: 'demo-2',
          namespace: 'default',
          body: {
            status: {
              conditions: [{ type: 'Ready', status: 'False' }],
              containerStatuses: [
                {
                  name: 'nginx',
                  ready: false,
                  restartCount: 1,
                  image: 'x',
                  imageID: 'y',
                  state: { waiting: { reason: 'CrashLoopBackOff' } },
                },
              ],
            },
          },
        },
        SMP,
      );
      await seen(/demo-2\s+0\/1\s+CrashLoopBackOff\s+1/);
    } finally {
      child.kill();
    }
  });

  test('delete an unscheduled pod: kubectl waits and reports it deleted', { skip }, async () => {
    assert.equal((await kubectl('delete', 'pod', 'loner')).stdout.trim(), 'pod "loner" deleted');
    assert.equal(await sim.getPod('loner'), undefined);
  });

  test('delete a scheduled pod with --wait=false leaves it Terminating', { skip }, async () => {
    await kubectl('delete', 'pod', 'demo-1', '--wait=false');
    assert.match((await kubectl('get', 'pod', 'demo-1')).stdout, /demo-1\s+1\/1\s+Terminating/);
  });

  test(
    'apply and replace a manifest (server-side field validation, no client-side schemas needed)',
    { skip },
    async () => {
      const file = join(sim.dir, 'pod.yaml');
      const manifest = (image: string, tier: string) =>
        `apiVersion: v1\nkind: Pod\nmetadata:\n  name: manifest\n  labels: {app: manifest, tier: ${tier}}\nspec:\n  containers:\n  - name: c\n    image: ${image}\n`;
      // Before server-side field validation (1.25+), kubectl validates against /openapi/v2 schemas,
      // which the simulator does not publish.
      const validate = kubectlMinor >= 25 ? [] : ['--validate=false'];
      writeFileSync(file, manifest('nginx:1.14.2', 'one'));
      assert.equal((await kubectl('apply', ...validate, '-f', file)).stdout.trim(), 'pod/manifest created');
      writeFileSync(file, manifest('nginx:1.14.2', 'two'));
      assert.equal((await kubectl('apply', ...validate, '-f', file)).stdout.trim(), 'pod/manifest configured');
      // The ServiceAccount admission plugin gave the pod a token volume and its mounts: replacing
      // it with the bare manifest would remove them, a forbidden pod update.
      const created = (await sim.getPod('manifest'))!;
      const volume = (created.spec as { volumes: { name: string }[] }).volumes[0]!.name;
      assert.match(volume, /^kube-api-access-[b-df-hj-np-tv-z2-9]{5}$/);
      writeFileSync(file, manifest('nginx:1.25.3', 'two'));
      await assert.rejects(kubectl('replace', ...validate, '-f', file), (err: { stderr: string }) => {
        assert.match(
          err.stderr,
          /The Pod "manifest" is invalid: spec: Forbidden: pod updates may not change fields other than/,
        );
        assert.ok(err.stderr.includes(`"${volume}"`), `the diff names the token volume: ${err.stderr}`);
        return true;
      });
      // Replacing it with the stored object, image changed, is an allowed update.
      const full = JSON.parse((await kubectl('get', 'pod', 'manifest', '-o', 'json')).stdout) as {
        spec: { containers: { image: string }[] };
      };
      full.spec.containers[0]!.image = 'nginx:1.25.3';
      writeFileSync(file, JSON.stringify(full));
      assert.equal((await kubectl('replace', ...validate, '-f', file)).stdout.trim(), 'pod/manifest replaced');
      const pod = (await sim.getPod('manifest'))!;
      assert.equal(pod.metadata.labels!.tier, 'two');
      assert.equal((pod.spec as { containers: { image: string }[] }).containers[0]!.image, 'nginx:1.25.3');
      assert.equal((pod.status as { phase: string }).phase, 'Pending');
    },
  );

  test('a wrong token is refused', { skip }, async () => {
    await assert.rejects(kubectl('get', 'pods', '--token', 'wrong'), (err: { stderr: string }) => {
      assert.match(err.stderr, /Unauthorized|must be logged in/);
      return true;
    });
  });
});
