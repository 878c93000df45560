// The RBAC suite of test/e2e/rbac.test.ts and test/e2e/rbac-rules.test.ts (kept apart so that
// neither file outgrows the runner's per-file bound on a loaded box): kwave as its own
// least-privileged identity, in-cluster, on the real control plane (issues #9.5, #11.2, #13.3):
// deploy/'s ServiceAccount, Role, ClusterRole and bindings applied for real, a token from the
// TokenRequest API, and kwave run as a Job's pod would run it (the env vars, the token and CA
// files, no kubeconfig).
// - part `usage` (rbac.test.ts): a pre-pull rollout, a full rollout (waves, a pause gate, an
//   approval gate, the record, the lease, Events; a kill mid-way and a second "Job pod" resume
//   it; the runner's own token refused when it tries to approve or pause, a person bound to
//   deploy/approver.yaml's Role approving; a rollback), owners kept in step, a resize, and then the audit
//   log of the whole file, both ways: every request kwave made is granted, every grant to its
//   ServiceAccount (deploy/rbac.yaml and the optional Roles of deploy/optional/) was used.
// - part `rules` (rbac-rules.test.ts): taking any single permission away refuses the run with
//   exit 2 naming it, nothing written (optional ones only warn); the audit log shows no request
//   outside deploy/rbac.yaml.
//
// Real backend only: the simulator has no authorizer, TokenRequest or audit log.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { parse, stringify } from 'yaml';
import { BACKEND, realNotBuilt } from './backend.js';
import { exitOf, planYaml, startFleet, type Fleet } from './rolloutCli.js';
import { KubeHttp } from '../../../src/sim/agent/kubeHttp.js';
import { readAudit, type AuditRecord } from '../../../src/sim/controlPlane/audit.js';
import type { ControlPlane } from '../../../src/sim/controlPlane/index.js';
import { NEW_ID, OLD_ID } from './images.js';
import {
  apiObject,
  deployObjects,
  grantFor,
  grantsOf,
  podIdentity,
  rbacPath,
  SA_USER,
  startInPod,
  untilAuthorizer,
  usedPermissions,
  withoutVerb,
  type Grant,
  type PodIdentity,
  type RbacObject,
} from './inCluster.js';

/** The plan with these fields of `spec` set. */
function withSpec(yaml: string, fields: Record<string, unknown>): string {
  const doc = parse(yaml) as { spec: Record<string, unknown> };
  Object.assign(doc.spec, fields);
  return stringify(doc);
}

/** A refusal of a decision by the API server, as kwave shows it: the server's own words. */
const refusedDecision = (verb: string) =>
  new RegExp(
    `HTTP 403 configmaps( "kwave-rbac-web\\.control")? is forbidden: User "${SA_USER.replace(/[.:]/g, '\\$&')}" cannot ${verb} resource "configmaps" in API group "" in the namespace "kwave-control" — people's decisions go to kwave-control/kwave-rbac-web\\.control; the Role kwave-approver \\(deploy/approver\\.yaml\\) grants them`,
  );

/** The ServiceAccount of the person who approves (bound to deploy/approver.yaml's Roles). */
const APPROVER = 'approver';

const skip =
  BACKEND !== 'real'
    ? 'real backend only (KWAVE_TEST_BACKEND=real): the simulator has no RBAC authorizer, TokenRequest API or audit log'
    : realNotBuilt;
const FIXTURE = `apiVersion: kwave.dev/v1alpha1
kind: SimFixture
workloads:
  - { namespace: web, name: web, replicas: 6, labels: { app: web }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { namespace: web, name: solo, replicas: 1, labels: { app: solo }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { namespace: web, name: pull, replicas: 2, labels: { app: pull }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { namespace: web, name: db, kind: StatefulSet, updateStrategy: OnDelete, replicas: 2, labels: { app: owned, part: db }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { namespace: web, name: agent, kind: DaemonSet, updateStrategy: OnDelete, labels: { app: owned, part: agent }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { namespace: web, name: front, kind: Deployment, replicas: 2, labels: { app: front }, containers: [{ name: nginx, image: "nginx:1.14.2" }] }
  - { namespace: web, name: sized, replicas: 2, labels: { app: sized }, containers: [{ name: nginx, image: "nginx:1.14.2", resources: { requests: { cpu: 100m, memory: 64Mi } } }] }
`;

/**
 * Each permission a rule of deploy/rbac.yaml grants, what taking it away does, and the command
 * that shows it. New rules add a row.
 */
interface RuleCase {
  group: string;
  resource: string;
  verb: string;
  /** refused: exit 2 naming it; degrades: exit 0 with a warning naming it. */
  expect: 'refused' | 'degrades';
  /** The plan file (in /plans) run with it taken away. */
  plan: 'full' | 'solo' | 'prepull' | 'owners' | 'front' | 'resize';
  /** The Role it is taken from, where more than one grants it. */
  role?: string;
}
const RULE_CASES: RuleCase[] = [
  ...['get', 'list', 'watch', 'patch'].map((verb) => ({
    group: '',
    resource: 'pods',
    verb,
    expect: 'refused' as const,
    plan: 'full' as const,
  })),
  { group: '', resource: 'pods/status', verb: 'patch', expect: 'refused', plan: 'full' },
  { group: '', resource: 'events', verb: 'create', expect: 'refused', plan: 'full' },
  // Only a plan with strategy.prePull needs them (the puller pods).
  { group: '', resource: 'pods', verb: 'create', expect: 'refused', plan: 'prepull' },
  { group: '', resource: 'pods', verb: 'delete', expect: 'refused', plan: 'prepull' },
  ...['get', 'create', 'update'].map((verb) => ({
    group: '',
    resource: 'configmaps',
    verb,
    expect: 'refused' as const,
    plan: 'full' as const,
    role: 'kwave',
  })),
  // People's decisions, read: beside the record (solo's controlNamespace is its record's), or in
  // kwave-control (full's), where the runner may do nothing else.
  { group: '', resource: 'configmaps', verb: 'watch', expect: 'refused', plan: 'solo', role: 'kwave' },
  ...['get', 'watch'].map((verb) => ({
    group: '',
    resource: 'configmaps',
    verb,
    expect: 'refused' as const,
    plan: 'full' as const,
    role: 'kwave-read-decisions',
  })),
  ...['get', 'create', 'update'].map((verb) => ({
    group: 'coordination.k8s.io',
    resource: 'leases',
    verb,
    expect: 'refused' as const,
    plan: 'full' as const,
  })),
  { group: 'policy', resource: 'poddisruptionbudgets', verb: 'list', expect: 'degrades', plan: 'solo' },
  { group: 'policy', resource: 'poddisruptionbudgets', verb: 'watch', expect: 'degrades', plan: 'solo' },
  { group: '', resource: 'nodes', verb: 'list', expect: 'degrades', plan: 'solo' },
  { group: '', resource: 'nodes', verb: 'watch', expect: 'degrades', plan: 'solo' },
  // spec.owners: reading a Deployment's pods' owners is a courtesy with owners: warn (a warning
  // without it); owners: update needs every read and the patch of the kinds it keeps in step.
  { group: 'apps', resource: 'replicasets', verb: 'get', expect: 'degrades', plan: 'front' },
  { group: 'apps', resource: 'deployments', verb: 'get', expect: 'degrades', plan: 'front' },
  // owners: update's patch is the optional Role kwave-owners-update's (deploy/optional/owners-update).
  ...['get', 'patch'].flatMap((verb) =>
    ['statefulsets', 'daemonsets'].map((resource) => ({
      group: 'apps',
      resource,
      verb,
      expect: 'refused' as const,
      plan: 'owners' as const,
    })),
  ),
  // Only a resize plan needs it: the optional Role kwave-resize's (deploy/optional/resize).
  { group: '', resource: 'pods/resize', verb: 'patch', expect: 'refused', plan: 'resize' },
];

export function rbacSuite(part: 'usage' | 'rules'): void {
  describe(`kwave in-cluster as deploy/rbac.yaml's ServiceAccount (real control plane): ${part}`, { skip }, () => {
    let fleet: Fleet;
    let cp: ControlPlane;
    let admin: KubeHttp;
    let plans: string;
    const pods: PodIdentity[] = [];
    const children = new Set<ChildProcess>();
    const objects = skip ? [] : deployObjects();
    const grants = grantsOf(objects);

    before(async () => {
      fleet = await startFleet({ fixture: FIXTURE, timeScale: 0.3 });
      cp = fleet.sim.real!.controlPlane;
      admin = new KubeHttp({ url: cp.url, caPem: cp.caPem, token: cp.adminToken, userAgent: 'kwave-e2e/rbac-admin' });
      // deploy/namespace.yaml and deploy/rbac.yaml, created as kubectl apply would.
      for (const o of objects) {
        const path = rbacPath(o).replace(/\/[^/]+$/, '');
        const collection =
          o.kind === 'Namespace'
            ? '/api/v1/namespaces'
            : o.kind === 'ServiceAccount'
              ? `/api/v1/namespaces/${o.metadata.namespace}/serviceaccounts`
              : path;
        await admin.request('POST', collection, apiObject(o));
      }
      // A person who decides: a ServiceAccount of its own, bound to deploy/approver.yaml's Roles
      // (which bind the group kwave-approvers; a ServiceAccount is in no such group).
      await admin.request('POST', '/api/v1/namespaces/kwave/serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: APPROVER },
      });
      for (const namespace of ['kwave-control', 'web'])
        await admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'kwave-approver-e2e', namespace },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kwave-approver' },
          subjects: [{ kind: 'ServiceAccount', name: APPROVER, namespace: 'kwave' }],
        });
      // The plans as the kubelet mounts a ConfigMap: files are symlinks into a timestamped folder.
      plans = join(fleet.dir, 'plans');
      mkdirSync(join(plans, '..2026_12_01_00_00_00.1'), { recursive: true });
      const files = {
        // People's decisions in kwave-control, where the runner may only read (as deploy/'s plans).
        'full.yaml': withSpec(
          planYaml({
            name: 'rbac-web',
            namespace: 'web',
            app: 'web',
            waves: '[1, "50%", "100%"]',
            concurrency: 2,
            maxUnavailable: 2,
            drainSeconds: 3,
            gates: [
              { name: 'settle', afterWaves: [1], pause: '1s' },
              { name: 'sign-off', afterWaves: [2], approval: true },
            ],
          }),
          { controlNamespace: 'kwave-control' },
        ),
        'solo.yaml': planYaml({ name: 'rbac-solo', namespace: 'web', app: 'solo', waves: '[1]' }),
        'prepull.yaml': planYaml({
          name: 'rbac-pull',
          namespace: 'web',
          app: 'pull',
          waves: '["100%"]',
          concurrency: 2,
          maxUnavailable: 2,
          prePull: true,
        }),
        // An OnDelete StatefulSet's and DaemonSet's pods, their templates kept in step; a Deployment's pods, its owner read (warn).
        'owners.yaml': withSpec(
          planYaml({
            name: 'rbac-owners',
            namespace: 'web',
            app: 'owned',
            waves: '["100%"]',
            concurrency: 2,
            maxUnavailable: 5,
          }),
          { owners: 'update' },
        ),
        // CPU raised in place (NotRequired: no drain, no restart).
        'resize.yaml': withSpec(
          planYaml({ name: 'rbac-resize', namespace: 'web', app: 'sized', waves: '["100%"]', concurrency: 2 }),
          { update: { containers: [{ name: 'nginx', resources: { requests: { cpu: '200m' } } }] } },
        ),
        'front.yaml': planYaml({
          name: 'rbac-front',
          namespace: 'web',
          app: 'front',
          waves: '["100%"]',
          concurrency: 2,
          maxUnavailable: 2,
        }),
      };
      for (const [key, text] of Object.entries(files)) {
        writeFileSync(join(plans, '..2026_12_01_00_00_00.1', key), text);
        symlinkSync(`..data/${key}`, join(plans, key));
      }
      symlinkSync('..2026_12_01_00_00_00.1', join(plans, '..data'));
    });

    after(async () => {
      for (const c of children) c.kill('SIGKILL');
      for (const p of pods) rmSync(p.dir, { recursive: true, force: true });
      admin?.close();
      await fleet?.close();
    });

    const newPod = async (account?: string) => {
      const p = await podIdentity(cp, admin, account);
      pods.push(p);
      return p;
    };
    const runInPod = (pod: PodIdentity, args: string[]) =>
      startInPod(pod, [...args, '--metrics-address', '0.0.0.0:0'], children);
    const noStackTrace = (stderr: string) => assert.doesNotMatch(stderr, /\n\s+at |internal error/, stderr);

    // First, while no node has the target image yet: the pre-pull creates, follows and deletes
    // puller pods as the ServiceAccount.
    if (part === 'usage')
      test('a pre-pull rollout in-cluster: the puller pods created and deleted as the ServiceAccount', async () => {
        const run = runInPod(await newPod(), ['run', join(plans, 'prepull.yaml')]);
        const end = await exitOf(run);
        assert.equal(end.code, 0, run.stderr());
        noStackTrace(run.stderr());
        const pulled = await fleet.pods('pull', 'web');
        assert.equal(pulled.size, 2, 'the pull pods');
        for (const [name, p] of pulled) assert.equal(p.imageID, NEW_ID, name);
        const writes = readAudit(cp.auditLogPath).filter(
          (r) =>
            r.user === SA_USER &&
            r.resource === 'pods' &&
            !r.subresource &&
            (r.verb === 'create' || r.verb === 'delete') &&
            (r.code ?? 500) < 300,
        );
        assert.ok(
          writes.some((r) => r.verb === 'create') && writes.some((r) => r.verb === 'delete'),
          `puller pods created and deleted: ${JSON.stringify(writes.map((r) => r.verb))}`,
        );
      });

    if (part === 'usage')
      test('a full rollout in-cluster: JSON lines, killed mid-way, resumed by a second Job pod, approved, rolled back', async () => {
        const full = join(plans, 'full.yaml');
        // A concurrent writer keeps relabelling the pods while kwave works on them (two loops, through
        // both runs): kwave's guarded patches meet 409s and it reads the pod afresh (`get pods`).
        let writing = true;
        const loop = async (from: number) => {
          for (let i = from; writing; i += 2)
            await fleet.sim.labelPodUncounted('web', `web-${i % 6}`, { touched: String(i) });
        };
        const writer = Promise.all([loop(0), loop(1)]);
        const first = runInPod(await newPod(), ['run', full]);
        await first.waitFor((e) => e.event === 'pod-start' && e.wave === 2, 'a pod of wave 2 started');
        first.child.kill('SIGKILL');
        await exitOf(first);
        assert.ok(
          first.events.length > 3 &&
            first
              .stdout()
              .trim()
              .split('\n')
              .every((l) => l.startsWith('{')),
          `JSON lines by default in a pod:\n${first.stdout()}`,
        );

        const second = runInPod(await newPod(), ['run', full]);
        await second.waitFor((e) => e.event === 'gate-approval-wait', 'the approval wait after wave 2');
        const status = runInPod(pods[1]!, ['status', full, '-o', 'json']);
        assert.equal((await exitOf(status)).code, 0, status.stderr());
        assert.equal((JSON.parse(status.stdout()) as { phase: string }).phase, 'Progressing');
        // Separation of duties: the runner's own token may not decide. The API server refuses the
        // write (403), and kwave shows its words as they are.
        for (const action of ['approve', 'pause']) {
          const self = runInPod(pods[1]!, [action, full]);
          const refused = await exitOf(self);
          console.log(`the runner's token: kwave ${action} → exit ${refused.code}: ${self.stderr().trim()}`);
          assert.equal(refused.code, 2, self.stderr());
          assert.match(self.stderr(), refusedDecision('create'));
          noStackTrace(self.stderr());
        }
        assert.ok(
          !second.events.some((e) => (e.event === 'gate-end' && e.gate === 'sign-off') || e.event === 'paused'),
          'the runner neither passed its gate nor paused',
        );
        // A person approves, with their own credentials: the runner, watching, goes on.
        const approver = runInPod(await newPod(APPROVER), ['approve', full, '-o', 'json']);
        assert.equal((await exitOf(approver)).code, 0, approver.stderr());
        const approval = JSON.parse(approver.stdout()) as { by: string; user: string };
        console.log(`a person: kwave approve → ${approver.stdout().trim()}`);
        assert.equal(approval.user, `system:serviceaccount:kwave:${APPROVER}`, 'the name the API server saw');
        const passed = await second.waitFor(
          (e) => e.event === 'gate-end' && e.gate === 'sign-off',
          'the approval gate to end',
        );
        assert.ok(passed.event === 'gate-end' && passed.result === 'passed', JSON.stringify(passed));
        const end = await exitOf(second);
        writing = false;
        await writer;
        assert.equal(end.code, 0, second.stderr());
        noStackTrace(second.stderr());
        for (const [name, p] of await fleet.pods('web', 'web')) {
          assert.equal(p.imageID, NEW_ID, name);
          assert.equal(p.restartCount, 1, `${name}: upgraded once across the kill`);
          assert.equal(p.gate, 'True', name);
        }

        const back = runInPod(await newPod(), ['rollback', full]);
        assert.equal((await exitOf(back)).code, 0, back.stderr());
        for (const [name, p] of await fleet.pods('web', 'web')) assert.equal(p.imageID, OLD_ID, `${name} rolled back`);
        const rolledBack = (await fleet.events('web')).filter((e) => e.reason === 'InPlaceRollback');
        assert.equal(rolledBack.length, 6, 'an Event per pod rolled back, written as the ServiceAccount');
      });

    if (part === 'usage')
      test("owners in-cluster: OnDelete templates set as the ServiceAccount (owners: update); a Deployment's owner read and warned about (owners: warn)", async () => {
        const owners = runInPod(await newPod(), ['run', join(plans, 'owners.yaml')]);
        const end = await exitOf(owners);
        assert.equal(end.code, 0, owners.stderr());
        noStackTrace(owners.stderr());
        const owned = await fleet.pods('owned', 'web');
        assert.ok(
          owned.size >= 3,
          `the StatefulSet's 2 pods and a DaemonSet pod per node: ${[...owned.keys()].join(', ')}`,
        );
        for (const [name, p] of owned) assert.equal(p.imageID, NEW_ID, name);
        for (const path of ['statefulsets/db', 'daemonsets/agent']) {
          const w = await admin.request<{ spec: { template: { spec: { containers: { image: string }[] } } } }>(
            'GET',
            `/apis/apps/v1/namespaces/web/${path}`,
          );
          assert.equal(
            w.spec.template.spec.containers[0]!.image,
            'nginx:1.25.3',
            `${path}: template set by the ServiceAccount`,
          );
        }
        const front = runInPod(pods[pods.length - 1]!, ['run', join(plans, 'front.yaml')]);
        assert.equal((await exitOf(front)).code, 0, front.stderr());
        assert.match(
          front.stderr(),
          /warning: Deployment web\/front \(RollingUpdate\), owner of 2 selected pods: its pod template still names nginx nginx:1\.14\.2/,
        );
        const apps = readAudit(cp.auditLogPath)
          .filter((r) => r.user === SA_USER && r.apiGroup === 'apps' && (r.code ?? 500) < 300)
          .map((r) => `${r.verb} ${r.resource}`);
        for (const used of [
          'get replicasets',
          'get deployments',
          'get statefulsets',
          'get daemonsets',
          'patch statefulsets',
          'patch daemonsets',
        ])
          assert.ok(apps.includes(used), `${used} as the ServiceAccount: ${[...new Set(apps)].join(', ')}`);
      });

    if (part === 'usage')
      test('a resize in-cluster: CPU raised through pods/resize as the ServiceAccount (deploy/optional/resize)', async () => {
        const run = runInPod(await newPod(), ['run', join(plans, 'resize.yaml')]);
        const end = await exitOf(run);
        assert.equal(end.code, 0, run.stderr());
        noStackTrace(run.stderr());
        const list = await admin.request<{
          items: { metadata: { name: string }; status: { containerStatuses?: { resources?: unknown }[] } }[];
        }>('GET', '/api/v1/namespaces/web/pods?labelSelector=app%3Dsized');
        assert.equal(list.items.length, 2);
        for (const p of list.items)
          assert.deepEqual(
            p.status.containerStatuses?.[0]?.resources,
            { requests: { cpu: '200m', memory: '64Mi' } },
            p.metadata.name,
          );
        const resized = readAudit(cp.auditLogPath).filter(
          (r) => r.user === SA_USER && r.subresource === 'resize' && r.verb === 'patch' && (r.code ?? 500) < 300,
        );
        assert.equal(resized.length, 2, 'one resize a pod, as the ServiceAccount');
      });

    for (const rule of part === 'rules' ? RULE_CASES : []) {
      const what = `${rule.verb} ${rule.resource}`;
      test(`without ${what}: ${rule.expect === 'refused' ? 'exit 2 naming it, nothing written' : 'a warning naming it, the rollout goes on'}`, async () => {
        const grant = grants.find(
          (g) =>
            g.group === rule.group &&
            g.resource === rule.resource &&
            g.verb === rule.verb &&
            (rule.role === undefined || g.name === rule.role),
        );
        assert.ok(grant, `deploy/rbac.yaml grants ${what}`);
        const role = objects.find((o) => o.kind === grant.kind && o.metadata.name === grant.name)!;
        const pod = await newPod();
        const asPod = new KubeHttp({
          url: cp.url,
          caPem: cp.caPem,
          token: pod.token,
          userAgent: 'kwave-e2e/rbac-check',
        });
        const put = async (o: RbacObject) => {
          const current = await admin.request<RbacObject & { metadata: { resourceVersion: string } }>(
            'GET',
            rbacPath(o),
          );
          await admin.request('PUT', rbacPath(o), {
            ...apiObject(o),
            metadata: { ...o.metadata, resourceVersion: current.metadata.resourceVersion },
          });
        };
        try {
          await put(withoutVerb(role, rule.group, rule.resource, rule.verb));
          await untilAuthorizer(asPod, { ...grant, namespace: grant.namespace ?? 'web' }, false);
          const auditFrom = readAudit(cp.auditLogPath).length;
          const run = runInPod(pod, ['run', join(plans, `${rule.plan}.yaml`)]);
          const exit = await exitOf(run);
          console.log(
            `rule removed: ${what} → exit ${exit.code}: ${run
              .stderr()
              .trim()
              .split('\n')
              .filter((l) => /forbidden|warning/.test(l))
              .join(' | ')}`,
          );
          noStackTrace(run.stderr());
          const scope = grant.namespace ? `in namespace ${grant.namespace}` : '(cluster-wide)';
          if (rule.expect === 'refused') {
            assert.equal(exit.code, 2, run.stderr());
            assert.match(
              run.stderr(),
              new RegExp(
                `kwave: (KUBE )?forbidden: cannot ${what} ${scope.replace(/[()]/g, '\\$&')} — ${grant.source.replace(/[()]/g, '\\$&')} grants it`,
              ),
            );
            const writes = readAudit(cp.auditLogPath)
              .slice(auditFrom)
              .filter(
                (r) =>
                  r.user === SA_USER &&
                  !['get', 'list', 'watch'].includes(r.verb) &&
                  r.resource !== 'selfsubjectaccessreviews' &&
                  r.resource !== 'selfsubjectrulesreviews',
              );
            assert.deepEqual(
              writes.map((r) => `${r.verb} ${r.resource}`),
              [],
              'refused before writing anything',
            );
          } else {
            assert.equal(exit.code, 0, run.stderr());
            assert.match(run.stderr(), new RegExp(`kwave: warning: cannot ${what} ${scope.replace(/[()]/g, '\\$&')}`));
          }
        } finally {
          await put(role);
          await untilAuthorizer(asPod, { ...grant, namespace: grant.namespace ?? 'web' }, true);
          asPod.close();
        }
      });
    }

    test(`the audit log of this whole file: every permission the ServiceAccount used is granted${part === 'usage' ? ', every grant was used' : ''}`, () => {
      // The runner's token trying to decide (the usage part's approve and pause): refused on
      // purpose, and exactly those two.
      const decidedBySelf = (r: AuditRecord) =>
        r.user === SA_USER && r.code === 403 && r.resource === 'configmaps' && r.namespace === 'kwave-control';
      const audit = readAudit(cp.auditLogPath);
      assert.equal(audit.filter(decidedBySelf).length, part === 'usage' ? 2 : 0, "the runner's own decisions refused");
      const used = usedPermissions(
        audit.filter((r) => !decidedBySelf(r)),
        SA_USER,
      );
      const rows = used.map((u) => {
        const grant = grantFor(u, grants);
        // A resize plan asks discovery whether the server serves pods/resize (GET /api/v1).
        const builtIn = ['selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'selfsubjectreviews'].includes(
          u.resource,
        )
          ? 'built-in system:basic-user'
          : /^nonResourceURL \/apis?(\/|$)/.test(u.resource) && u.verb === 'get'
            ? 'built-in system:discovery'
            : undefined;
        return { ...u, grantedBy: grant ? `${grant.kind} ${grant.name}` : (builtIn ?? 'NOT GRANTED') };
      });
      console.log(
        [
          'audit: group | resource | verb | namespace | ok | refused | granted by',
          ...rows.map(
            (r) =>
              `audit: ${r.group || 'core'} | ${r.resource} | ${r.verb} | ${r.namespace ?? '-'} | ${r.ok} | ${r.refused} | ${r.grantedBy}`,
          ),
        ].join('\n'),
      );
      const outside = rows.filter((r) => r.grantedBy === 'NOT GRANTED' || r.refused > 0);
      assert.deepEqual(
        outside.map((r) => `${r.verb} ${r.resource} ${r.namespace ?? ''}`),
        [],
        'requests outside deploy/rbac.yaml, or refused',
      );
      // The rule-removal runs are refused before they use anything: "every grant used" is the usage part's.
      if (part === 'rules') return;
      // `get pods` is needed only after a 409 on a pod write (the concurrent writer above makes them):
      // required to show up whenever one happened, and said so when none did.
      const records = readAudit(cp.auditLogPath);
      const conflicts = records.filter(
        (r) => r.user === SA_USER && r.resource === 'pods' && r.verb === 'patch' && r.code === 409,
      ).length;
      console.log(`audit: ${conflicts} pod writes of the ServiceAccount met a 409`);
      const conflictOnly = (g: Grant) => g.resource === 'pods' && g.verb === 'get' && conflicts === 0;
      const unused = grants.filter((g: Grant) => !used.some((u) => u.ok > 0 && grantFor(u, [g])) && !conflictOnly(g));
      assert.deepEqual(
        unused.map((g) => `${g.verb} ${g.resource}`),
        [],
        'granted but never used: trim deploy/rbac.yaml',
      );
    });
  });
}
