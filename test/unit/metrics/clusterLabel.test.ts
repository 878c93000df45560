// A multi-cluster plan's metrics: every kwave_ series carries `cluster` (one registry, one view per
// cluster); a one-cluster plan's series have no such label.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KwaveMetrics } from '../../../src/metrics/registry.js';

describe('the cluster label', () => {
  test('every kwave_ sample of a multi-cluster plan names its cluster, and the views count apart', async () => {
    const m = new KwaveMetrics({ plan: 'web', clusters: ['eu-1', 'us-1'] });
    const eu = m.forCluster('eu-1');
    const us = m.forCluster('us-1');
    eu.declareWaves(2);
    us.declareWaves(2);
    eu.podUpgradeConfirmedByImageID(1, 1.5);
    us.podUpgradeConfirmedByImageID(1, 1.5);
    us.podUpgradeConfirmedByImageID(1, 2);
    eu.setPhase('Completed');
    us.kubeRequest('patch', 'pods', 200);
    const text = await m.exposition();
    const samples = text.split('\n').filter((l) => l.startsWith('kwave_'));
    assert.ok(samples.length > 40);
    for (const s of samples) assert.match(s, /[{,]plan="web",cluster="(eu-1|us-1)"[,}]/, s);
    assert.match(text, /^kwave_pod_upgrades_completed_total\{plan="web",cluster="eu-1",wave="1"\} 1$/m);
    assert.match(text, /^kwave_pod_upgrades_completed_total\{plan="web",cluster="us-1",wave="1"\} 2$/m);
    assert.match(text, /^kwave_rollout_phase\{plan="web",cluster="eu-1",phase="Completed"\} 1$/m);
    assert.match(text, /^kwave_rollout_phase\{plan="web",cluster="us-1",phase="Pending"\} 1$/m);
    assert.match(
      text,
      /^kwave_kube_requests_total\{plan="web",cluster="us-1",verb="patch",resource="pods",code="200"\} 1$/m,
    );
    assert.equal(eu.registry, m.registry, 'one registry behind every view');
  });

  test('a one-cluster plan has no cluster label at all', async () => {
    const text = await new KwaveMetrics({ plan: 'web' }).exposition();
    assert.doesNotMatch(text, /cluster=/);
    assert.match(text, /^kwave_rollout_phase\{plan="web",phase="Pending"\} 1$/m);
  });

  test('an unknown cluster is a bug, said as one', () => {
    assert.throws(
      () => new KwaveMetrics({ plan: 'web', clusters: ['eu-1'] }).forCluster('us-1'),
      /no metrics for cluster "us-1"/,
    );
    assert.throws(() => new KwaveMetrics({ plan: 'web' }).forCluster('eu-1'), /a one-cluster plan/);
  });
});
