// The bare client of bench/bare.ts: kwave's cluster module (HTTPS, decoding, the pod cache) doing
// a pod's six protocol steps as plain async code, with none of kwave's engine (decisions, the
// record, budgets, events, metrics, output). What it costs a pod is the floor that module puts
// under `kwave run`. Runs on the built module (dist/), as `kwave run` does.
//
//   node bench/fleet/bare-client.mjs KUBECONFIG CONCURRENCY IMAGE WAVE_SIZE...
// Prints one JSON line: pods upgraded, and the process's own CPU seconds.
import { connect, PodCache, conditionPatchBody } from '../../dist/cluster/index.js';

const [kubeconfig, concurrencyArg, image, ...waveArgs] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const waveSizes = waveArgs.map(Number);
const NS = 'default';
const GATE = 'kwave.dev/in-place-ready';
const CONTAINER = 'nginx';

const cluster = connect({ kubeconfig });
const cache = new PodCache(cluster, { namespaces: [NS], labelSelector: 'app=demo' });
await cache.synced;
const names = cache
  .list(NS)
  .map((p) => p.metadata.name)
  .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));

const conditionOf = (pod, type) => pod.status?.conditions?.find((c) => c.type === type)?.status;
const containerStatus = (pod) => pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);

/** Close the gate, wait not Ready, patch image and state, wait for a new image ID and ready, reopen, wait Ready. */
async function upgrade(name) {
  let pod = cache.get(NS, name);
  const from = containerStatus(pod);
  const waitFor = async (predicate) => {
    const r = await cache.waitFor(NS, name, predicate, { timeoutMs: 300_000 });
    if (typeof r === 'string') throw new Error(`${name}: ${r}`);
    pod = r;
  };
  const guard = () => ({ resourceVersion: pod.metadata.resourceVersion });
  pod = await cluster.patchPodStatus(NS, name, conditionPatchBody({ type: GATE, status: 'False', reason: 'InPlaceUpdate', message: 'updating in place' }, new Date(), guard()));
  await waitFor((p) => conditionOf(p, 'Ready') === 'False');
  // The same size of state annotation as kwave writes.
  const state = { plan: 'bench', revision: 'bare', startedAt: new Date().toISOString(), direction: 'upgrade', containers: { [CONTAINER]: { fromImage: pod.spec.containers[0].image, fromImageID: from.imageID, fromContainerID: from.containerID, fromRestartCount: from.restartCount, toImage: image } } };
  pod = await cluster.patchPod(NS, name, { metadata: { ...guard(), annotations: { 'kwave.dev/in-place-state': JSON.stringify(state) } }, spec: { containers: [{ name: CONTAINER, image }] } });
  await waitFor((p) => {
    const now = containerStatus(p);
    return now !== undefined && now.imageID !== from.imageID && now.ready === true;
  });
  pod = await cluster.patchPodStatus(NS, name, conditionPatchBody({ type: GATE, status: 'True', reason: 'InPlaceUpdateComplete', message: 'updated in place' }, new Date(), guard()));
  await waitFor((p) => conditionOf(p, 'Ready') === 'True');
}

let upgraded = 0;
let start = 0;
for (const size of waveSizes) {
  const wave = names.slice(start, start + size);
  start += size;
  let next = 0;
  const worker = async () => {
    while (next < wave.length) {
      await upgrade(wave[next++]);
      upgraded++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, wave.length) }, worker));
}
const cpu = process.cpuUsage();
console.log(JSON.stringify({ upgraded, cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
cache.close();
cluster.close();
