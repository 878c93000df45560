// Writes only the lease's holder may make: the pods' (gate, image, Events) and the rollout
// record's, each sent through asHolder (lease/asHolder.ts). Reads and watches go out as they are.
import type { PodWriter } from '../inplace/executor.js';
import { asHolder, type Holder } from '../lease/asHolder.js';
import type { RecordApi } from '../record/store.js';

export function holderPodWriter(writer: PodWriter, lock: Holder): PodWriter {
  return {
    patchPod: (namespace, name, body) => asHolder(lock, () => writer.patchPod(namespace, name, body)),
    patchPodStatus: (namespace, name, body) => asHolder(lock, () => writer.patchPodStatus(namespace, name, body)),
    resizePod: (namespace, name, body) => asHolder(lock, () => writer.resizePod(namespace, name, body)),
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
