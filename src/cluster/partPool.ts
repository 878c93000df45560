// One frozen copy of each pod part that repeats across pods: a condition, the conditions of pods
// whose transitions fell in the same seconds, a node's tolerations, a template's containers, the
// labels of a ReplicaSet's pods. JSON.parse makes new objects for every pod and every version;
// held in the pod cache as they come, they would be much of its heap (at the start of a 50,000-pod
// run, conditions 17 MB and small arrays 20 MB of 130 MB), and each young-generation collection
// would move the new copies of the pods in flight (pooling takes 15 % off its pauses at 10,000
// pods). decode.ts builds a part, then asks the pool for the copy it holds: the new one dies young.
//
// Parts are found by their content through a tree of Maps, one level a member (field name, then
// value; or item): no key to build and hash, and the values are mostly pooled strings whose
// hashes V8 keeps. Held parts are frozen: a reader that changed a shared part would throw, not
// corrupt other pods. Bounded: past `maxNodes` nodes (a Map each, ~150-200 bytes) the pool starts
// over; a rollout on the simulator needed 1,134 of them at 10,000 pods, 4,548 at 50,000; values
// unique to a pod (a crash loop's back-off message, say) only fill it sooner.

type Node = Map<unknown, unknown>;

/** Where a node keeps the part whose content is the path to it. */
const HELD = Symbol('held');

export class PartPool {
  private objects: Node = new Map();
  private lists: Node = new Map();
  private nodes = 0;

  constructor(private readonly maxNodes = 16384) {}

  /** The held copy of the flat object `fresh` (values, or parts already shared), else `fresh`, frozen and held. */
  shareObject<T extends object>(kind: string, fresh: T): T {
    let node = this.child(this.objects, kind);
    for (const k in fresh) node = this.child(this.child(node, k), (fresh as Record<string, unknown>)[k]);
    return this.held(node, fresh);
  }

  /** The held copy of the list `fresh` (of values, or parts already shared), else `fresh`, frozen and held. */
  shareList<T>(kind: string, fresh: T[]): T[] {
    let node = this.child(this.child(this.lists, kind), fresh.length);
    for (let i = 0; i < fresh.length; i++) node = this.child(node, fresh[i]);
    return this.held(node, fresh);
  }

  get size(): number {
    return this.nodes;
  }

  private held<T extends object>(node: Node, fresh: T): T {
    const held = node.get(HELD);
    if (held !== undefined) return held as T;
    node.set(HELD, Object.freeze(fresh));
    return fresh;
  }

  private child(node: Node, member: unknown): Node {
    let child = node.get(member) as Node | undefined;
    if (child !== undefined) return child;
    if (this.nodes >= this.maxNodes) {
      // Start over; the walk in progress ends in the dropped trees, harmlessly.
      this.objects = new Map();
      this.lists = new Map();
      this.nodes = 0;
    }
    child = new Map();
    node.set(member, child);
    this.nodes++;
    return child;
  }
}
