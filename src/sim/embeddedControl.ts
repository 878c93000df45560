// The embedded backend's side of the admin port: stats counted by its own API server, live API
// faults, deletions and the NotReady fault straight on the in-memory store.
import type { SimControl } from './adminServer.js';
import type { Admission } from './apiserver/admission.js';
import type { AppTraffic } from './appMetrics.js';
import { deletePod } from './disruptions.js';
import type { Faults } from './faults.js';
import type { ImageTable } from './images.js';
import type { Kubelet } from './kubelet.js';
import type { SimStats } from './stats.js';
import type { Store } from './store.js';

export function embeddedControl(parts: {
  store: Store;
  stats: SimStats;
  faults: Faults;
  admission: Admission;
  traffic: AppTraffic;
  images: ImageTable;
  kubelet: Kubelet;
  now?: () => Date;
}): SimControl {
  const { store, stats, kubelet } = parts;
  const now = parts.now ?? (() => new Date());
  return {
    stats: () => stats.snapshot(),
    resetStats: () => {
      stats.reset();
      return stats.snapshot();
    },
    faults: parts.faults,
    admission: parts.admission,
    traffic: parts.traffic,
    images: parts.images,
    deletePod: async (namespace, name, grace) => {
      const pod = deletePod(store, namespace, name, grace, now());
      return {
        namespace,
        name,
        uid: pod.metadata.uid,
        deletionTimestamp: pod.metadata.deletionTimestamp ?? null,
        removed: !store.get('pods', namespace, name),
      };
    },
    setNodeReady: async (name, ready) => kubelet.setNodeReady(name, ready),
    deleteNode: async (name) => {
      store.remove('nodes', undefined, name);
    },
    crashContainer: async (namespace, name, container) => kubelet.crashContainer(namespace, name, container),
  };
}
