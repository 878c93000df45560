// The worker thread that serves `kwave sim`'s embedded clusters (simThread.ts starts it): started
// with the options, it posts what serves where, then closes the clusters when told and posts
// that. A thread of its own because a V8 heap's young generation is sized only when the heap is
// made: this one's is larger than the main thread's (simThread.ts says why and by how much).
import { parentPort, workerData } from 'node:worker_threads';
import { KwaveError } from '../errors.js';
import { startSimClusters, type SimClustersOptions } from '../sim/clusters.js';
import { startSim, type SimOptions } from '../sim/index.js';
import type { WorldSummary } from '../sim/world.js';

/** What the worker serves: one cluster, or several (`--clusters`). */
export type SimWorkerRequest = { kind: 'one'; options: SimOptions } | { kind: 'clusters'; options: SimClustersOptions };

export interface ServedCluster {
  /** The context name with `--clusters`. */
  name?: string;
  url: string;
  metricsUrl: string;
  world: WorldSummary;
}

/** From the worker: started (or failed to), then closed once told to close. */
export type SimWorkerMessage =
  | { type: 'started'; clusters: ServedCluster[] }
  /** A KwaveError keeps its code and exit code across the thread (the main thread rebuilds it). */
  | {
      type: 'failed';
      message: string;
      kwave?: { code: KwaveError['code']; exitCode: KwaveError['exitCode']; pos: KwaveError['pos'] };
    }
  | { type: 'closed' };

/** To the worker: close the clusters. */
export type SimWorkerCommand = { type: 'close' };

const port = parentPort;
if (port) {
  const request = workerData as SimWorkerRequest;
  const post = (message: SimWorkerMessage) => port.postMessage(message);
  try {
    const served =
      request.kind === 'one'
        ? await startSim(request.options).then((sim) => ({
            clusters: [{ url: sim.url, metricsUrl: sim.metricsUrl, world: sim.world }],
            close: () => sim.close(),
          }))
        : await startSimClusters(request.options).then((sims) => ({
            clusters: sims.clusters.map((c) => ({
              name: c.name,
              url: c.sim.url,
              metricsUrl: c.sim.metricsUrl,
              world: c.sim.world,
            })),
            close: () => sims.close(),
          }));
    port.once('message', (command: SimWorkerCommand) => {
      if (command.type !== 'close') return;
      void served.close().then(() => {
        post({ type: 'closed' });
        port.close();
      });
    });
    post({ type: 'started', clusters: served.clusters });
  } catch (err) {
    post(
      err instanceof KwaveError
        ? { type: 'failed', message: err.message, kwave: { code: err.code, exitCode: err.exitCode, pos: err.pos } }
        : { type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) },
    );
    port.close();
  }
}
