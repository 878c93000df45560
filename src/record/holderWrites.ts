// Writes only the lease's holder may make: the pods' (gate, image, Events) and the rollout
// record's. Each waits for the run lock to confirm the lease — at once while it is held; while it
// is in doubt (renewals unanswered), until a reclaim confirms it — and is not sent once the lease
// is lost: a runner that another may have replaced never writes over the new holder's work.
import type { PodWriter } from '../inplace/executor.js';
import { ExitCode, KwaveError } from '../errors.js';
import type { RunLock } from './runLock.js';
import type { RecordApi } from './store.js';

type Holder = Pick<RunLock, 'confirmed' | 'lost'>;

/** Sends `write` once the lease is confirmed ours; throws KwaveError LEASE_LOST (exit 4) if it never is. */
export async function asHolder<T>(lock: Holder, write: () => Promise<T>): Promise<T> {
  if (!(await lock.confirmed())) {
    throw new KwaveError(
      'LEASE_LOST',
      `write not sent: ${lock.lost ?? 'the lease was released'}`,
      ExitCode.INTERRUPTED,
    );
  }
  return write();
}

export function holderPodWriter(writer: PodWriter, lock: Holder): PodWriter {
  return {
    patchPod: (namespace, name, body) => asHolder(lock, () => writer.patchPod(namespace, name, body)),
    patchPodStatus: (namespace, name, body) => asHolder(lock, () => writer.patchPodStatus(namespace, name, body)),
    createEvent: (spec) => asHolder(lock, () => writer.createEvent(spec)),
  };
}

export function holderRecordApi(api: RecordApi, lock: Holder): RecordApi {
  return {
    getConfigMap: (namespace, name) => api.getConfigMap(namespace, name),
    createConfigMap: (namespace, body) => asHolder(lock, () => api.createConfigMap(namespace, body)),
    updateConfigMap: (namespace, body) => asHolder(lock, () => api.updateConfigMap(namespace, body)),
    watchConfigMaps: (namespace, query, onEvent, onDone) => api.watchConfigMaps(namespace, query, onEvent, onDone),
  };
}
