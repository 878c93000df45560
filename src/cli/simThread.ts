// `kwave sim`'s side of the thread its embedded clusters are served from (simWorker.ts is the
// other side): start it, learn where it serves or why it could not, tell it to close, and hear
// if it fails on its own while it serves.
import { Worker } from 'node:worker_threads';
import { KwaveError } from '../errors.js';
import { packagePath } from '../packageRoot.js';
import type { ServedCluster, SimWorkerCommand, SimWorkerMessage, SimWorkerRequest } from './simWorker.js';

/**
 * The young generation of the simulator's thread, in MB: V8 makes it of three semi-spaces, so
 * semi-spaces of 64 MB where Node's default is 16. In a rollout most of the simulator's garbage
 * (requests, versions, watch lines) lives about as long as a pod's step; a small generation
 * would copy and promote much of it. Under `npm run bench` at 50,000 pods this saves about an
 * eighth of the simulator's CPU for ~100 MB more peak RSS (docs/sim.md, "Scale"); semi-spaces of
 * 32 MB save a third as much, 128 MB no more.
 */
const SIM_YOUNG_GENERATION_MB = 192;

export interface Served {
  clusters: ServedCluster[];
  /** Rejects if the simulator's thread fails after it started (it serves nothing then). */
  crashed: Promise<never>;
  close(): Promise<void>;
}

/** Starts the embedded clusters in their worker thread; resolves once they serve. */
export function serveInWorker(
  request: SimWorkerRequest,
  workerFile = packagePath('dist/cli/sim-worker.js'),
): Promise<Served> {
  const worker = new Worker(workerFile, {
    workerData: request,
    resourceLimits: { maxYoungGenerationSizeMb: SIM_YOUNG_GENERATION_MB },
  });
  const ended = new Promise<never>((_, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the simulator's thread exited (code ${code})`)));
  });
  // Also ends (rejects) at the normal exit after close, when no one waits for it any more.
  ended.catch(() => {});
  const next = () => Promise.race([new Promise<SimWorkerMessage>((resolve) => worker.once('message', resolve)), ended]);
  return next().then((m) => {
    if (m.type === 'failed')
      throw m.kwave ? new KwaveError(m.kwave.code, m.message, m.kwave.exitCode, m.kwave.pos) : new Error(m.message);
    if (m.type !== 'started') throw new Error(`the simulator's thread said ${m.type} before it started`);
    const closed = next().then(() => worker.terminate());
    closed.catch(() => {}); // a crash is reported through `crashed`
    return {
      clusters: m.clusters,
      crashed: ended,
      close: async () => {
        worker.postMessage({ type: 'close' } satisfies SimWorkerCommand);
        await closed;
      },
    };
  });
}
