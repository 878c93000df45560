// The node agent over HTTP against an API server that has no kubelet of its own (the embedded
// simulator's API server alone): it registers nodes with zones and leases, runs the pods bound to
// them, restarts a container on an image patch, flips Ready with the readiness gate, posts
// kubelet Events and finishes a graceful deletion with its own DELETE.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startNodeAgent, type NodeAgent } from '../../src/sim/agent/index.js';
import { KubeHttp } from '../../src/sim/agent/kubeHttp.js';
import { DEFAULT_NODES, defaultImages } from '../../src/sim/fixture.js';
import { ImageTable } from '../../src/sim/images.js';
import type { ContainerStatus, PodCondition } from '../../src/sim/podStatus.js';
import type { KubeObject } from '../../src/sim/store.js';
import { startSimApi, type SimApi } from './helpers/simApi.js';
import { embeddedOnly } from './helpers/backend.js';
import { NEW_ID } from './helpers/images.js';

const GATE = 'kwave.dev/in-place-ready';

function podManifest(name: string, node: string, image = 'nginx:1.14.2'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'demo' } },
    spec: { nodeName: node, containers: [{ name: 'nginx', image }], readinessGates: [{ conditionType: GATE }] },
  };
}

const cs = (p: KubeObject) =>
  (p.status as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses?.[0];
const cond = (p: KubeObject, type: string) =>
  (p.status as { conditions?: PodCondition[] } | undefined)?.conditions?.find((c) => c.type === type);

/** How long a wait may take before it fails: a bound, not a sleep (the shared machine can be very slow). */
const BOUND_MS = 180_000;

describe(
  'node agent against an API server without a kubelet',
  {
    skip: embeddedOnly(
      'checks the node agent against the embedded API server; on the real pass every suite runs on it',
    ),
  },
  () => {
    let api: SimApi;
    let agent: NodeAgent;
    let client: KubeHttp;
    /** Resolves with the pod (as the server stores it) once `ok` holds. */
    const waitPod = (name: string, ok: (p: KubeObject) => boolean, what: string) =>
      new Promise<KubeObject>((resolve, reject) => {
        const check = () => {
          const p = api.store.get('pods', 'default', name);
          if (p && ok(p)) {
            clearTimeout(timer);
            stop();
            resolve(p);
          }
        };
        const stop = api.store.subscribe(check);
        const timer = setTimeout(() => {
          stop();
          reject(
            new Error(
              `timed out waiting for ${name}: ${what}; now ${JSON.stringify(api.store.get('pods', 'default', name)?.status)}`,
            ),
          );
        }, BOUND_MS);
        check();
      });
    /** The pod's Events once `ok` holds for them: the agent posts Events apart from its status writes, so they may come later. */
    const waitEvents = async (
      name: string,
      ok: (events: KubeObject[]) => boolean,
      what: string,
    ): Promise<KubeObject[]> => {
      const deadline = Date.now() + BOUND_MS;
      for (;;) {
        const events = api.store
          .list('events', 'default')
          .filter((e) => (e.involvedObject as { name: string }).name === name);
        if (ok(events)) return events;
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for the Events of ${name}: ${what}; now ${events.map((e) => `${String(e.reason)}: ${String(e.message)}`).join(' | ')}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    before(async () => {
      api = await startSimApi();
      client = new KubeHttp({ url: api.api.url, caPem: api.api.caPem, token: api.api.token });
      agent = await startNodeAgent({
        url: api.api.url,
        caPem: api.api.caPem,
        token: api.api.token,
        nodes: DEFAULT_NODES,
        images: new ImageTable(defaultImages()),
        timeScale: 0.05,
        seed: 3,
        leaseRenewMs: 100,
        nodeStatusCheckMs: 200,
      });
    });
    after(async () => {
      await agent.close();
      client.close();
      await api.close();
    });

    test('registers its nodes with zones and capacity, and a lease per node', () => {
      const nodes = api.store.list('nodes');
      assert.deepEqual(
        nodes.map((n) => n.metadata.name),
        ['sim-node-1', 'sim-node-2', 'sim-node-3'],
      );
      assert.equal(nodes[1]!.metadata.labels?.['topology.kubernetes.io/zone'], 'zone-b');
      assert.equal((nodes[0]!.status as { allocatable: { pods: string } }).allocatable.pods, '110');
      const lease = api.store.get('leases', 'kube-node-lease', 'sim-node-2');
      assert.equal((lease?.spec as { holderIdentity: string }).holderIdentity, 'sim-node-2');
      assert.match((lease?.spec as { renewTime: string }).renewTime, /\.\d{6}Z$/);
    });

    test('a bound pod is pulled, started and Ready once its gate is True; an image patch restarts it in place', async () => {
      await client.request('POST', '/api/v1/namespaces/default/pods', podManifest('agent-0', 'sim-node-1'));
      const running = await waitPod('agent-0', (p) => cs(p)?.ready === true, 'container ready');
      assert.equal((running.status as { phase: string }).phase, 'Running');
      assert.equal(cond(running, 'Ready')?.reason, 'ReadinessGatesNotReady');
      await client.request(
        'PATCH',
        '/api/v1/namespaces/default/pods/agent-0/status',
        { status: { conditions: [{ type: GATE, status: 'True' }] } },
        'application/strategic-merge-patch+json',
      );
      const ready = await waitPod('agent-0', (p) => cond(p, 'Ready')?.status === 'True', 'Ready');
      const before = cs(ready)!;
      assert.equal(before.restartCount, 0);
      assert.equal(
        cond(ready, GATE)?.status,
        'True',
        'the gate set by the client is kept by the kubelet status writes',
      );

      await client.request(
        'PATCH',
        '/api/v1/namespaces/default/pods/agent-0',
        { spec: { containers: [{ name: 'nginx', image: 'nginx:1.25.3' }] } },
        'application/strategic-merge-patch+json',
      );
      const upgraded = await waitPod(
        'agent-0',
        (p) => cs(p)?.restartCount === 1 && cond(p, 'Ready')?.status === 'True',
        'restarted and Ready',
      );
      const after = cs(upgraded)!;
      assert.equal(after.imageID, NEW_ID);
      assert.notEqual(after.containerID, before.containerID);
      assert.equal(after.lastState.terminated?.containerID, before.containerID);
      assert.equal(upgraded.metadata.uid, ready.metadata.uid);
      const pulled = (e: KubeObject) =>
        e.reason === 'Pulled' && /^Successfully pulled image "nginx:1.25.3" in /.test(e.message as string);
      const events = await waitEvents(
        'agent-0',
        (es) => es.some(pulled) && es.some((e) => e.reason === 'Killing'),
        'Killing and Pulled nginx:1.25.3',
      );
      const killing = events.find((e) => e.reason === 'Killing');
      assert.equal(killing?.message, 'Container nginx definition changed, will be restarted');
      assert.deepEqual(killing?.source, { component: 'kubelet', host: 'sim-node-1' });
    });

    test('a graceful delete: the agent stops the containers and removes the pod itself', async () => {
      await client.request('POST', '/api/v1/namespaces/default/pods', podManifest('agent-1', 'sim-node-2'));
      await waitPod('agent-1', (p) => cs(p)?.ready === true, 'container ready');
      const deleted = await client.request<KubeObject>('DELETE', '/api/v1/namespaces/default/pods/agent-1', {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
      });
      assert.ok(deleted.metadata.deletionTimestamp, 'the server only marks a bound pod');
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('pod not removed')), BOUND_MS);
        const check = () => {
          if (!api.store.get('pods', 'default', 'agent-1')) {
            clearTimeout(timer);
            stop();
            resolve();
          }
        };
        const stop = api.store.subscribe(check);
        check();
      });
      assert.ok(!agent.pod('default', 'agent-1') || agent.pod('default', 'agent-1')!.metadata.deletionTimestamp);
    });

    test('NotReady: the node goes silent (its lease is no longer renewed); back, it reports Ready and renews', async () => {
      const renewed = (node: string) =>
        (api.store.get('leases', 'kube-node-lease', node)!.spec as { renewTime: string }).renewTime;
      /** Resolves once `node`'s lease has been renewed `times` more times (an event, with a bound). */
      const renewals = (node: string, times: number) =>
        new Promise<void>((resolve, reject) => {
          let last = renewed(node);
          let seen = 0;
          const stop = api.store.subscribe(() => {
            const now = renewed(node);
            if (now !== last && ++seen >= times) {
              clearTimeout(timer);
              stop();
              resolve();
            }
            last = now;
          });
          const timer = setTimeout(
            () => (stop(), reject(new Error(`${node}: ${seen} of ${times} renewals`))),
            BOUND_MS,
          );
        });
      const leaseMoves = (node: string) => renewals(node, 1).then(() => true);
      await agent.setNodeReady('sim-node-3', false);
      assert.equal(agent.isNodeReady('sim-node-3'), false);
      // Not "wait, then check nothing happened": the other nodes renewing three times is the proof
      // that node 3 had its turns (renewals go round every node) and took none.
      const silentSince = renewed('sim-node-3');
      await renewals('sim-node-2', 3);
      assert.equal(renewed('sim-node-3'), silentSince, 'a silent kubelet renews nothing');
      await agent.setNodeReady('sim-node-3', true);
      const ready = (
        api.store.get('nodes', undefined, 'sim-node-3')!.status as { conditions: PodCondition[] }
      ).conditions.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'True');
      assert.equal(ready?.reason, 'KubeletReady');
      assert.equal(await leaseMoves('sim-node-3'), true);
    });

    test('a node marked Unknown behind its back (the node-lifecycle controller, after an apiserver outage ate its heartbeats) is reported Ready again', async () => {
      const readyOf = () =>
        (api.store.get('nodes', undefined, 'sim-node-1')!.status as { conditions: PodCondition[] }).conditions.find(
          (c) => c.type === 'Ready',
        );
      // What kube-controller-manager writes when a node's lease went stale: every condition Unknown.
      const conditions = (
        api.store.get('nodes', undefined, 'sim-node-1')!.status as { conditions: PodCondition[] }
      ).conditions.map((c) => ({
        ...c,
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
      }));
      await client.request(
        'PATCH',
        '/api/v1/nodes/sim-node-1/status',
        { status: { conditions } },
        'application/strategic-merge-patch+json',
      );
      assert.equal(readyOf()?.status, 'Unknown');
      // The real kubelet posts its status whenever it differs from the API's: so must the agent, or the node stays NotReady for good.
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (readyOf()?.status !== 'True') return;
          clearTimeout(timer);
          stop();
          resolve();
        };
        const stop = api.store.subscribe(check);
        const timer = setTimeout(
          () => (stop(), reject(new Error(`sim-node-1 still ${JSON.stringify(readyOf())}`))),
          60_000,
        );
        check();
      });
      assert.equal(readyOf()?.reason, 'KubeletReady');
    });
  },
);
