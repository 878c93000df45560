// How strategic merge patch treats each list of the served kinds: merged by a key, merged as a
// set of primitives, or replaced whole (every list not named here is atomic, like tolerations,
// readinessGates, containerStatuses, command and args). The keys are the `patchMergeKey` /
// `patchStrategy` markers of the Kubernetes API types.

export interface PatchSchema {
  /** Schemas of the fields of a map. */
  fields?: Readonly<Record<string, PatchSchema>>;
  /** For a list: 'merge' merges items (by `mergeKey`, or as a set when there is none). */
  strategy?: 'merge';
  mergeKey?: string;
  /** For a keyed list: the schema of its items. */
  items?: PatchSchema;
}

const keyed = (mergeKey: string, items?: PatchSchema): PatchSchema => ({
  strategy: 'merge',
  mergeKey,
  ...(items ? { items } : {}),
});
const set: PatchSchema = { strategy: 'merge' };

const container: PatchSchema = {
  fields: {
    env: keyed('name'),
    ports: keyed('containerPort'),
    volumeMounts: keyed('mountPath'),
    volumeDevices: keyed('devicePath'),
  },
};

const metadata: PatchSchema = {
  fields: { ownerReferences: keyed('uid'), finalizers: set },
};

const conditions = keyed('type');

const pod: PatchSchema = {
  fields: {
    metadata,
    spec: {
      fields: {
        containers: keyed('name', container),
        initContainers: keyed('name', container),
        ephemeralContainers: keyed('name', container),
        volumes: keyed('name'),
        imagePullSecrets: keyed('name'),
        hostAliases: keyed('ip'),
        topologySpreadConstraints: keyed('topologyKey'),
        schedulingGates: keyed('name'),
        resourceClaims: keyed('name'),
      },
    },
    status: {
      fields: {
        conditions,
        podIPs: keyed('ip'),
        hostIPs: keyed('ip'),
        resourceClaimStatuses: keyed('name'),
      },
    },
  },
};

const node: PatchSchema = {
  fields: {
    metadata,
    spec: { fields: { podCIDRs: set } },
    status: { fields: { conditions, addresses: keyed('type') } },
  },
};

const namespace: PatchSchema = { fields: { metadata, status: { fields: { conditions } } } };

const plain: PatchSchema = { fields: { metadata } };

const BY_KIND: Readonly<Record<string, PatchSchema>> = { Pod: pod, Node: node, Namespace: namespace };

export function patchSchemaFor(kind: string): PatchSchema {
  return BY_KIND[kind] ?? plain;
}
