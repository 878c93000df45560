// The admission webhooks `kwave plan` names: those whose rules match a write of the plan's run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WebhookConfiguration } from '../../../src/cluster/admissionRequests.js';
import { KubeError } from '../../../src/cluster/kubeError.js';
import { webhookLines } from '../../../src/cli/webhookLines.js';
import { kwaveWrites, readAdmissionWebhooks, webhooksOnWrites } from '../../../src/session/admissionWebhooks.js';
import { testPlan } from '../helpers/plans.js';

/** A controller's webhooks as a workload controller installs them: pods validated on UPDATE, created on CREATE, its own kinds. */
const controller: WebhookConfiguration[] = [
  {
    kind: 'validating',
    name: 'ctl-validating',
    webhooks: [
      {
        name: 'vpod.ctl.io',
        failurePolicy: 'Fail',
        namespaceSelector: { matchExpressions: [{ key: 'control-plane', operator: 'DoesNotExist' }] },
        rules: [{ operations: ['UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      },
      {
        name: 'vset.ctl.io',
        rules: [{ operations: ['*'], apiGroups: ['apps.ctl.io'], apiVersions: ['v1alpha1'], resources: ['sets'] }],
      },
      {
        name: 'vstatus.ctl.io',
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { team: 'a' } },
        rules: [{ operations: ['UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/status'] }],
      },
    ],
  },
  {
    kind: 'mutating',
    name: 'ctl-mutating',
    webhooks: [
      {
        name: 'mpod.ctl.io',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      },
      {
        name: 'mall.ctl.io',
        rules: [{ operations: ['CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Cluster' }],
      },
    ],
  },
];

test('webhooksOnWrites: the webhooks whose rules match a write of the run, with failure policy and selectors', () => {
  const rows = webhooksOnWrites(controller, kwaveWrites(testPlan()));
  assert.deepEqual(rows, [
    {
      kind: 'validating',
      configuration: 'ctl-validating',
      webhook: 'vpod.ctl.io',
      writes: ['UPDATE pods'],
      failurePolicy: 'Fail',
      namespaceSelector: '!control-plane',
    },
    {
      kind: 'validating',
      configuration: 'ctl-validating',
      webhook: 'vstatus.ctl.io',
      writes: ['UPDATE pods/status'],
      failurePolicy: 'Ignore',
      objectSelector: 'team=a',
    },
  ]);
  // With pre-pull the run creates pods: the mutating pod webhook judges them.
  const prePull = webhooksOnWrites(controller, kwaveWrites(testPlan({ strategy: '{ waves: [1], prePull: true }' })));
  assert.deepEqual(
    prePull.map((r) => `${r.webhook}: ${r.writes.join(', ')}`),
    ['vpod.ctl.io: UPDATE pods, DELETE pods', 'vstatus.ctl.io: UPDATE pods/status', 'mpod.ctl.io: CREATE pods'],
  );
});

test('webhooksOnWrites: `*` is every resource but no subresource; `pods/*` and `*/*` reach subresources', () => {
  const hook = (resources: string[]): WebhookConfiguration[] => [
    {
      kind: 'validating',
      name: 'c',
      webhooks: [{ name: 'w', rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources }] }],
    },
  ];
  const judged = (resources: string[]) =>
    webhooksOnWrites(hook(resources), kwaveWrites(testPlan())).flatMap((r) => r.writes);
  assert.deepEqual(judged(['*']), ['UPDATE pods', 'UPDATE configmaps']);
  assert.deepEqual(judged(['pods/*']), ['UPDATE pods/status']);
  assert.deepEqual(judged(['*/*']), ['UPDATE pods', 'UPDATE pods/status', 'UPDATE configmaps']);
  assert.deepEqual(judged(['deployments']), []);
});

test('readAdmissionWebhooks: forbidden is unknown (said so), a server without the API has none', async () => {
  const plan = testPlan();
  const failing = (code: number) => async () => {
    throw new KubeError(code, 'x', 'no');
  };
  const forbidden = await readAdmissionWebhooks(plan, failing(403));
  assert.ok('unknown' in forbidden);
  assert.deepEqual(webhookLines(forbidden), [
    '',
    "admission webhooks on kwave's writes: unknown (listing webhook configurations (admissionregistration.k8s.io) is forbidden)",
  ]);
  assert.deepEqual(await readAdmissionWebhooks(plan, failing(404)), { rows: [] });
  const found = await readAdmissionWebhooks(plan, async () => controller);
  assert.deepEqual(webhookLines(found), [
    '',
    "admission webhooks on kwave's writes (2; 1 with failurePolicy Fail refuse a write while they are down):",
    '  validating ctl-validating/vpod.ctl.io: UPDATE pods; failurePolicy Fail; namespaces !control-plane',
    '  validating ctl-validating/vstatus.ctl.io: UPDATE pods/status; failurePolicy Ignore; objects team=a',
  ]);
});
