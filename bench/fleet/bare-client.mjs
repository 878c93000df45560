// The bare client of `npm run bench -- --client bare` (bench/fleet.ts): kwave's cluster module
// (HTTPS, decoding, the pod cache) doing a pod's six protocol steps as plain async code, with none
// of kwave's engine (decisions, the record, budgets, events, metrics, output). What it costs a pod
// is the floor that module puts under `kwave run`. Runs on the built module (dist/), as `kwave run`
// does; the pod's fields are read, and the bodies built, with kwave's own helpers.
//
//   node bench/fleet/bare-client.mjs KUBECONFIG CONCURRENCY IMAGE WAVE_SIZE...
// Prints one JSON line: pods upgraded, and the process's own CPU seconds.
import { connect, PodCache } from '../../dist/cluster/index.js';
import { conditionPatchBody } from '../../dist/cluster/requestBodies.js';
import {
  GATE_CLOSED_REASON,
  GATE_OPEN_REASON,
  gateMessage,
  resourceVersionGuard,
} from '../../dist/inplace/gateCondition.js';
import { conditionStatus, containerStatus } from '../../dist/inplace/podView.js';
import { encodeState, STATE_ANNOTATION } from '../../dist/inplace/state.js';
import { PLAN_DEFAULTS } from '../../dist/plan/defaults.js';
import { report, throughWaves } from './clientWaves.mjs';

const [kubeconfig, concurrencyArg, image, ...waveArgs] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const waveSizes = waveArgs.map(Number);
const NS = 'default';
const GATE = PLAN_DEFAULTS.readinessGate.conditionType;
const PLAN = 'bench';
const REVISION = 'bare';
const CONTAINER = 'nginx';

const cluster = connect({ kubeconfig });
const cache = new PodCache(cluster, { namespaces: [NS], labelSelector: 'app=demo' });
await cache.synced;
const names = cache
  .list(NS)
  .map((p) => p.metadata.name)
  .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));

/** Close the gate, wait not Ready, patch image and state, wait for a new image ID and ready, reopen, wait Ready. */
async function upgrade(name) {
  let pod = cache.get(NS, name);
  const from = containerStatus(pod, CONTAINER);
  const waitFor = async (predicate) => {
    const r = await cache.waitFor(NS, name, predicate, { timeoutMs: 300_000 });
    if (typeof r === 'string') throw new Error(`${name}: ${r}`);
    pod = r;
  };
  const gate = (status, reason, complete) =>
    cluster.patchPodStatus(
      NS,
      name,
      conditionPatchBody(
        { type: GATE, status, reason, message: gateMessage('upgrade', PLAN, REVISION, complete) },
        new Date(),
        resourceVersionGuard(pod),
      ),
    );
  pod = await gate('False', GATE_CLOSED_REASON, false);
  await waitFor((p) => conditionStatus(p, 'Ready') === 'False');
  // The state annotation kwave writes with its image patch.
  const state = encodeState({
    plan: PLAN,
    revision: REVISION,
    wave: 1,
    startedAt: new Date().toISOString(),
    direction: 'upgrade',
    containers: {
      [CONTAINER]: {
        fromImage: pod.spec.containers[0].image,
        fromImageID: from.imageID,
        fromContainerID: from.containerID,
        fromRestartCount: from.restartCount,
        toImage: image,
      },
    },
  });
  pod = await cluster.patchPod(NS, name, {
    metadata: { ...resourceVersionGuard(pod), annotations: { [STATE_ANNOTATION]: state } },
    spec: { containers: [{ name: CONTAINER, image }] },
  });
  await waitFor((p) => {
    const now = containerStatus(p, CONTAINER);
    return now !== undefined && now.imageID !== from.imageID && now.ready === true;
  });
  pod = await gate('True', GATE_OPEN_REASON, true);
  await waitFor((p) => conditionStatus(p, 'Ready') === 'True');
}

report(await throughWaves(names, waveSizes, concurrency, upgrade));
cache.close();
cluster.close();
