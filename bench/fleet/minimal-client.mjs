// The minimal client of `npm run bench -- --client minimal` (bench/fleet.ts): the least any Node
// client can do for a pod's six protocol steps, so that its CPU a pod is the floor of "HTTPS, JSON
// and a watch" on the machine, under kwave's cluster module (`--client bare`) and kwave itself.
// undici's pool for the three patches, one watch stream cut into lines, JSON.parse of each version
// not already held (its resourceVersion peeked first, as kwave does), fields read off the parsed
// JSON. Nothing else: no decoding into views, no pooled parts, no retries, no record, no output.
// It keeps each pod's last version whole, so its RSS is not a floor: compare its CPU. Reads only
// kubeconfigs with a bearer token and inline CA data (the simulator's, both backends), itself:
// client-node's KubeConfig would load ~1,000 modules unbundled, 0.8 s of CPU at its start.
//
// The peer benchmark (bench/peers.ts, tool `minimal`) runs it as the floor beside kwave and Kruise:
// one wave of N, M at a time, a drain of D seconds timed from its own sight of the pod not Ready.
//
//   node bench/fleet/minimal-client.mjs [--namespace NS] [--selector K=V] [--drain-seconds D]
//        KUBECONFIG CONCURRENCY IMAGE WAVE_SIZE...
// Prints one JSON line: pods upgraded, and the process's own CPU seconds.
import https from 'node:https';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import YAML from 'yaml';
// kwave's own line cutter and version peek (plain functions over bytes, in a file that imports nothing).
import { lineSplitter, peekResourceVersion } from '../../dist/cluster/wireBytes.js';
import { report, throughWaves } from './clientWaves.mjs';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    namespace: { type: 'string', default: 'default' },
    selector: { type: 'string', default: 'app=demo' },
    'drain-seconds': { type: 'string', default: '0' },
  },
});
const [kubeconfig, concurrencyArg, image, ...waveArgs] = positionals;
const concurrency = Number(concurrencyArg);
const waveSizes = waveArgs.map(Number);
const NS = flags.namespace;
const SELECTOR = encodeURIComponent(flags.selector);
const DRAIN_MS = Number(flags['drain-seconds']) * 1000;
/** The audit log tells its requests from the bench's and kwave's by this. */
const USER_AGENT = 'kwave-minimal-client';
const GATE = 'kwave.dev/in-place-ready';
const CONTAINER = 'nginx';

const config = YAML.parse(readFileSync(kubeconfig, 'utf8'));
const context = config.contexts.find((c) => c.name === config['current-context']).context;
const cluster = config.clusters.find((c) => c.name === context.cluster).cluster;
const user = config.users.find((u) => u.name === context.user).user;
if (!user.token || !cluster['certificate-authority-data'])
  throw new Error(`${kubeconfig}: the minimal client needs a bearer token and certificate-authority-data`);
const ca = Buffer.from(cluster['certificate-authority-data'], 'base64');
const authorization = `Bearer ${user.token}`;
const pool = new Pool(cluster.server, {
  connect: { ca, secureContext: tls.createSecureContext({ ca }) },
  keepAliveTimeout: 60_000,
});

/** name -> the last version seen of the pod, and the one step waiting on it. */
const pods = new Map();

function seen(pod) {
  const name = pod.metadata.name;
  const rv = pod.metadata.resourceVersion;
  let entry = pods.get(name);
  if (!entry) pods.set(name, (entry = { pod, rv, waiter: undefined }));
  // etcd's revisions, well inside a double's exact integers.
  else if (Number(rv) > Number(entry.rv)) Object.assign(entry, { pod, rv });
  else return;
  if (entry.waiter?.until(pod)) {
    const { resolve } = entry.waiter;
    entry.waiter = undefined;
    resolve(pod);
  }
}

function waitFor(name, until) {
  const entry = pods.get(name);
  if (until(entry.pod)) return entry.pod;
  return new Promise((resolve) => (entry.waiter = { until, resolve }));
}

async function request(method, path, body) {
  const headers = {
    authorization,
    'user-agent': USER_AGENT,
    accept: 'application/json',
    ...(body ? { 'content-type': 'application/strategic-merge-patch+json' } : {}),
  };
  const answer = await pool.request({ method, path, headers, body: body && JSON.stringify(body) });
  const text = await answer.body.text();
  if (answer.statusCode !== 200)
    throw Object.assign(new Error(`${method} ${path}: ${answer.statusCode} ${text.slice(0, 300)}`), {
      status: answer.statusCode,
    });
  return JSON.parse(text);
}

/**
 * A patch of the pod `name` guarded by the version it was built from (`build(pod)`, the last held);
 * on a 409 (the pod changed since: a kubelet's or controller's write), built again from a newer one.
 */
async function patch(name, path, build) {
  for (;;) {
    const held = pods.get(name).pod;
    try {
      const pod = await request('PATCH', path, build(held));
      seen(pod);
      return pod;
    } catch (err) {
      if (err.status !== 409) throw err;
      await waitFor(name, (p) => Number(p.metadata.resourceVersion) > Number(held.metadata.resourceVersion));
    }
  }
}

/** The watch from the list's version: a line whose version is already held (an answer's) is not parsed. */
function watch(resourceVersion) {
  const NAME = Buffer.from('"name":"');
  const nameOf = (line) => {
    const at = line.indexOf(NAME);
    return at === -1 ? undefined : line.toString('latin1', at + NAME.length, line.indexOf(0x22, at + NAME.length));
  };
  const lines = lineSplitter((line) => {
    const name = nameOf(line);
    if (name !== undefined && pods.get(name)?.rv === peekResourceVersion(line)) return;
    const event = JSON.parse(line.toString());
    if (event.type === 'ADDED' || event.type === 'MODIFIED') seen(event.object);
  });
  const url = `${cluster.server}/api/v1/namespaces/${NS}/pods?labelSelector=${SELECTOR}&watch=true&allowWatchBookmarks=true&resourceVersion=${resourceVersion}`;
  https
    .get(url, { ca, headers: { authorization, 'user-agent': USER_AGENT } }, (res) => {
      res.on('data', lines.push);
      // It does not watch again: a run whose watch ends fails rather than waits forever.
      res.on('end', () => fail(`the watch ended (HTTP ${res.statusCode})`));
    })
    .on('error', (err) => fail(`the watch failed: ${err.message}`));
}

function fail(message) {
  console.error(`minimal client: ${message}`);
  process.exit(1);
}

const condition = (pod, type) => pod.status?.conditions?.find((c) => c.type === type)?.status;
const containerStatus = (pod) => pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
const podPath = (name) => `/api/v1/namespaces/${NS}/pods/${name}`;
const gate = (name, status) =>
  patch(name, `${podPath(name)}/status`, (pod) => ({
    metadata: { resourceVersion: pod.metadata.resourceVersion },
    status: {
      conditions: [
        {
          type: GATE,
          status,
          reason: 'MinimalClient',
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
    },
  }));

/** Close the gate, wait not Ready, drain, patch the image (and a note the size of kwave's state annotation), wait for a new image ID and ready, reopen, wait Ready. */
async function upgrade(name) {
  let pod = pods.get(name).pod;
  const fromImageID = containerStatus(pod)?.imageID;
  await gate(name, 'False');
  pod = await waitFor(name, (p) => condition(p, 'Ready') === 'False');
  if (DRAIN_MS > 0) await sleep(DRAIN_MS);
  const note = JSON.stringify({
    fromImage: pod.spec.containers[0].image,
    fromImageID,
    toImage: image,
    startedAt: new Date().toISOString(),
    pad: 'x'.repeat(300),
  });
  await patch(name, podPath(name), (held) => ({
    metadata: {
      resourceVersion: held.metadata.resourceVersion,
      annotations: { 'bench.kwave.dev/minimal-client': note },
    },
    spec: { containers: [{ name: CONTAINER, image }] },
  }));
  await waitFor(name, (p) => {
    const now = containerStatus(p);
    return now !== undefined && now.imageID !== fromImageID && now.ready === true;
  });
  await gate(name, 'True');
  await waitFor(name, (p) => condition(p, 'Ready') === 'True');
}

const list = await request('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${SELECTOR}`);
for (const pod of list.items) seen(pod);
watch(list.metadata.resourceVersion);
const names = [...pods.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));

report(await throughWaves(names, waveSizes, concurrency, upgrade));
// The watch and the pool's connections would hold the process open.
process.exit(0);
