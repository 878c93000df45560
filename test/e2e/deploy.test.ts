// deploy/ as a user applies it: `kubectl kustomize deploy/` renders the namespace, the RBAC, the
// plans' ConfigMap, the CronJob and the Job; the plans in the ConfigMap are valid; the Job's exit
// code policy matches kwave's exit codes; the default install grants kwave's ServiceAccount no
// pod create or delete, no workload change and no decision, which only the optional components
// (deploy/optional/) add; and on the real control plane `kubectl apply
// --dry-run=server -k deploy/` passes the API server's own validation (strict field checks,
// admission), while a broken field is refused — so the check can fail.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { BACKEND, noClusterOnReal, realNotBuilt } from './helpers/backend.js';
import { BIN, ROOT } from './helpers/kwaveBin.js';
import { startTestSim } from './helpers/backend.js';
import { ExitCode } from '../../src/errors.js';
import { missing } from './helpers/prerequisites.js';
import { grantsOf, type RbacObject } from './helpers/inCluster.js';

const kubectlMissing = missing('kubectl');

const run = promisify(execFile);
type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
};

/** `kubectl kustomize deploy/`, with these components of deploy/ added (as a user uncomments them). */
async function render(components: string[] = []): Promise<{ objects: Obj[] }> {
  let root = join(ROOT, 'deploy');
  const dir = components.length > 0 ? await mkdtemp(join(tmpdir(), 'kwave-kustomize-')) : undefined;
  try {
    if (dir) {
      await cp(root, join(dir, 'deploy'), { recursive: true });
      root = join(dir, 'deploy');
      const file = join(root, 'kustomization.yaml');
      await writeFile(
        file,
        `${await readFile(file, 'utf8')}components:\n${components.map((c) => `  - ${c}\n`).join('')}`,
      );
    }
    const { stdout } = await run('kubectl', ['kustomize', root]);
    return { objects: parseAllDocuments(stdout).map((d) => d.toJS() as Obj) };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

describe('deploy/ kustomization', () => {
  test(
    'renders every part; the plans validate; the Job fails at once on halt and refusal, retries the rest',
    { skip: noClusterOnReal || kubectlMissing },
    async () => {
      const { objects } = await render();
      assert.deepEqual(
        objects
          .map((o) => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '-HASH')}`)
          .sort(),
        [
          'ClusterRole -/kwave-nodes',
          'ClusterRoleBinding -/kwave-nodes',
          'ConfigMap kwave/kwave-plans-HASH',
          'CronJob kwave/kwave-web-nightly',
          'Job kwave/kwave-web-nginx-1-25',
          'Namespace -/kwave',
          'Namespace -/kwave-control',
          'Role kwave-control/kwave-approver',
          'Role kwave-control/kwave-read-decisions',
          'Role web/kwave',
          'Role web/kwave-approver',
          'RoleBinding kwave-control/kwave-approver',
          'RoleBinding kwave-control/kwave-read-decisions',
          'RoleBinding web/kwave',
          'RoleBinding web/kwave-approver',
          'ServiceAccount kwave/kwave',
        ],
      );
      // Least privilege by default: the ServiceAccount can delete no pod, create none, resize none,
      // change no workload, and write no decision; the optional features' Roles come only with their components.
      const writes = (list: Obj[]) =>
        grantsOf(list as RbacObject[]).filter(
          (r) =>
            (r.resource === 'pods' && ['create', 'delete'].includes(r.verb)) ||
            r.resource === 'pods/resize' ||
            (r.group === 'apps' && r.verb !== 'get') ||
            (r.namespace === 'kwave-control' && !['get', 'watch'].includes(r.verb)),
        );
      assert.deepEqual(writes(objects), []);
      const withComponents = await render(['optional/pre-pull', 'optional/owners-update', 'optional/resize']);
      assert.deepEqual(
        writes(withComponents.objects)
          .map((r) => `${r.name}: ${r.verb} ${r.resource}`)
          .sort(),
        [
          'kwave-owners-update: patch daemonsets',
          'kwave-owners-update: patch statefulsets',
          'kwave-pre-pull: create pods',
          'kwave-pre-pull: delete pods',
          'kwave-resize: patch pods/resize',
        ],
      );
      const plans = objects.find((o) => o.kind === 'ConfigMap')!;
      const dir = await mkdtemp(join(tmpdir(), 'kwave-deploy-'));
      try {
        for (const [key, text] of Object.entries(plans.data ?? {})) await writeFile(join(dir, key), text);
        const { stdout } = await run(process.execPath, [BIN, 'validate', dir]);
        assert.equal(
          stdout
            .trim()
            .split('\n')
            .filter((l) => l.startsWith('OK ')).length,
          2,
          stdout,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      const cron = objects.find((o) => o.kind === 'CronJob')!.spec as {
        concurrencyPolicy: string;
        startingDeadlineSeconds: number;
        successfulJobsHistoryLimit: number;
        jobTemplate: { spec: JobSpec };
      };
      assert.equal(cron.concurrencyPolicy, 'Forbid');
      assert.ok(cron.startingDeadlineSeconds > 0 && cron.successfulJobsHistoryLimit > 0);
      type JobSpec = {
        backoffLimit: number;
        activeDeadlineSeconds: number;
        podFailurePolicy: { rules: { action: string; onExitCodes?: { values: number[] } }[] };
        template: { spec: { volumes: { configMap: { name: string } }[]; containers: { args: string[] }[] } };
      };
      const job = objects.find((o) => o.kind === 'Job')!.spec as JobSpec;
      for (const spec of [job, cron.jobTemplate.spec]) {
        assert.ok(spec.backoffLimit > 0 && spec.activeDeadlineSeconds > 0);
        const failJob = spec.podFailurePolicy.rules.find((r) => r.action === 'FailJob')!.onExitCodes!.values;
        assert.deepEqual(failJob, [ExitCode.BAD_INPUT, ExitCode.HALTED]);
        assert.equal(
          spec.template.spec.volumes[0]!.configMap.name,
          plans.metadata.name,
          'the pod mounts the generated ConfigMap',
        );
        const planKey = spec.template.spec.containers[0]!.args[1]!.replace('/plans/', '');
        assert.ok(planKey in (plans.data ?? {}), `${planKey} is in the ConfigMap`);
      }
    },
  );

  const realSkip =
    BACKEND !== 'real'
      ? 'real backend only (KWAVE_TEST_BACKEND=real): server-side dry-run needs the real kube-apiserver'
      : realNotBuilt || kubectlMissing;
  test(
    'kubectl apply --dry-run=server -k deploy/ passes the real API server; a broken field is refused',
    { skip: realSkip },
    async () => {
      const sim = await startTestSim({ pods: 1 });
      const dir = await mkdtemp(join(tmpdir(), 'kwave-deploy-'));
      try {
        const kc = join(dir, 'kubeconfig');
        await writeFile(kc, sim.kubeconfig(), { mode: 0o600 });
        // Dry-run creates nothing, so the namespaces the other objects live in must exist first.
        await run('kubectl', ['--kubeconfig', kc, 'create', 'namespace', 'web']);
        await run('kubectl', ['--kubeconfig', kc, 'apply', '-f', join(ROOT, 'deploy/namespace.yaml')]);
        const { stdout } = await run('kubectl', [
          '--kubeconfig',
          kc,
          'apply',
          '--dry-run=server',
          '-k',
          join(ROOT, 'deploy'),
        ]);
        console.log(
          stdout
            .trim()
            .split('\n')
            .map((l) => `dry-run: ${l}`)
            .join('\n'),
        );
        assert.equal(
          stdout
            .trim()
            .split('\n')
            .filter((l) => /\(server dry run\)$/.test(l)).length,
          16,
          stdout,
        );

        const { objects } = await render();
        const cron = objects.find((o) => o.kind === 'CronJob')!;
        const job = objects.find((o) => o.kind === 'Job')!;
        const broken = join(dir, 'broken.yaml');
        await writeFile(
          broken,
          [
            { ...cron, spec: { ...cron.spec, concurrencyPolicy: 'Sometimes' } },
            { ...job, spec: { ...job.spec, backofLimit: 4 } },
          ]
            .map((o) => stringify(o))
            .join('---\n'),
        );
        const refused = await run('kubectl', ['--kubeconfig', kc, 'apply', '--dry-run=server', '-f', broken]).then(
          () => undefined,
          (err: { stderr: string }) => err.stderr,
        );
        assert.ok(refused, 'the broken manifests were accepted');
        assert.match(refused, /concurrencyPolicy: Unsupported value: "Sometimes"/);
        assert.match(refused, /unknown field "spec.backofLimit"/);
      } finally {
        await rm(dir, { recursive: true, force: true });
        await sim.close();
      }
    },
  );
});
