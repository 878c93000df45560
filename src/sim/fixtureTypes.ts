// The fixture's documents: `Fixture` (defaults filled in, what the simulator builds its world
// from) and `RawFixture` (the YAML as schemas/fixture.schema.json allows it). Types only.
import type { Faults } from './faults.js';
import type { ImageDecl } from './images.js';

export interface FixtureNode {
  name: string;
  zone?: string;
  labels?: Record<string, string>;
  /** Pods the node admits (capacity `pods`); default 110, or the fixture's pods on it if more. */
  maxPods?: number;
  /** Images this node's registry mirror lacks: pulls of them fail here only (a mirror not yet synced). */
  missingImages?: string[];
  /** CPU and memory (capacity = allocatable); default cpu 8, memory 32Gi. */
  capacity?: { cpu?: string; memory?: string };
}

interface FixtureContainer {
  name: string;
  image: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  ports?: number[];
  resources?: { requests?: { cpu?: string; memory?: string }; limits?: { cpu?: string; memory?: string } };
  resizePolicy?: { resourceName: 'cpu' | 'memory'; restartPolicy: 'NotRequired' | 'RestartContainer' }[];
}

export interface FixtureWorkload {
  namespace: string;
  name: string;
  replicas: number;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  containers: FixtureContainer[];
  /** undefined: no readiness gate. */
  readinessGate?: { conditionType: string; condition: 'True' | 'False' | 'absent' };
  owner?: { kind: OwnerKind; name?: string };
  nodes?: string[];
  /** Pods (or absent): bare pods (with `owner` names only). Otherwise a real apps/v1 object owns the pods (src/sim/workloads.ts). */
  kind?: WorkloadKind;
  /** StatefulSet and DaemonSet: how their controller replaces pods on a template change. */
  updateStrategy?: 'OnDelete' | 'RollingUpdate';
}

/** A policy/v1 PodDisruptionBudget the world starts with. */
export interface FixturePdb {
  namespace: string;
  name: string;
  selector: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
  };
  minAvailable?: number | string;
  maxUnavailable?: number | string;
}

type WorkloadKind = 'Pods' | 'Deployment' | 'StatefulSet' | 'DaemonSet';

type OwnerKind = 'ReplicaSet' | 'StatefulSet' | 'DaemonSet' | 'Job';

interface FixtureTiming {
  pullSeconds?: number;
  startSeconds?: number;
  readySeconds?: number;
  stopSeconds?: number;
  crashSeconds?: number;
  jitter?: number;
}

/** A fixture with its defaults filled in. */
export interface Fixture {
  nodes: FixtureNode[];
  images: Record<string, ImageDecl>;
  workloads: FixtureWorkload[];
  podDisruptionBudgets?: FixturePdb[];
  timing: FixtureTiming;
  timeScale?: number;
  seed?: number;
  traffic?: { requestsPerSecond?: number };
  faults?: Partial<Faults>;
}

/** The raw document as the schema allows it. */
interface RawWorkload extends Omit<
  FixtureWorkload,
  'namespace' | 'labels' | 'readinessGate' | 'owner' | 'kind' | 'replicas'
> {
  kind?: WorkloadKind;
  replicas?: number;
  namespace?: string;
  labels?: Record<string, string>;
  readinessGate?: false | { conditionType?: string; condition?: 'True' | 'False' | 'absent' };
  owner?: { kind: OwnerKind | 'None'; name?: string };
}
export interface RawFixture extends Omit<
  Fixture,
  'nodes' | 'images' | 'workloads' | 'timing' | 'podDisruptionBudgets'
> {
  podDisruptionBudgets?: (Omit<FixturePdb, 'namespace'> & { namespace?: string })[];
  nodes?: FixtureNode[];
  images?: Record<string, ImageDecl>;
  workloads?: RawWorkload[];
  timing?: FixtureTiming;
}
