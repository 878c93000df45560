// The node agent's nodes on a real API server, as kubelets keep them: each Node registered once
// (zone labels, capacity, allocatable, healthy conditions), and a Lease in `kube-node-lease`
// per node renewed every 10 s — the heartbeat kube-controller-manager's node-lifecycle
// controller watches. The NotReady fault is a kubelet gone silent: its lease is no longer
// renewed and nothing of the node is written, so that the real controller, once the node's
// grace period is over, sets its conditions Unknown, taints it `unreachable` and marks its pods
// not Ready (had the agent written Unknown itself, the controller would never see the node go
// from Ready to not Ready, and would leave its pods Ready). Back, the kubelet reports Ready True
// and renews again.
import type { FixtureNode } from '../fixture.js';
import { rfc3339 } from '../kubelet/pods.js';
import { nodeConditionsWithReadiness } from '../nodeController.js';
import type { PodCondition } from '../podStatus.js';
import type { KubeObject } from '../store.js';
import { nodeObject } from '../world.js';
import { KubeHttpError, type KubeHttp } from './kubeHttp.js';

const LEASE_DURATION_SECONDS = 40;
/** A kubelet renews every leaseDuration / 4. */
const RENEW_MS = 10_000;
/** A kubelet's nodeStatusUpdateFrequency. */
const STATUS_CHECK_MS = 10_000;

/** MicroTime, as Lease times are written: `2006-01-02T15:04:05.000000Z`. */
const microTime = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export interface NodeSetOptions {
  nodes: readonly FixtureNode[];
  /** Pods expected per node, so that capacity `pods` fits them (as world.ts sizes nodes). */
  podsPerNode?: ReadonlyMap<string, number>;
  now?: () => Date;
  onWarning?: (message: string) => void;
  /** How often leases are renewed (default 10 s, as a kubelet); shorter with a shorter node grace period. */
  renewMs?: number;
  /**
   * How often a live node's status is compared with the API's (default 10 s, a kubelet's
   * nodeStatusUpdateFrequency): a Ready condition someone else changed — the node-lifecycle
   * controller marks a node Unknown when its heartbeats could not land, e.g. through an apiserver
   * outage — is reported Ready again, as a kubelet posts its status whenever it differs.
   */
  statusCheckMs?: number;
}

export class NodeSet {
  private readonly nodes = new Map<string, KubeObject>();
  private readonly leaseVersions = new Map<string, string>();
  private readonly down = new Set<string>();
  /** A renewal on its way, per node: a node going silent waits for it, so none lands after. */
  private readonly renewing = new Map<string, Promise<void>>();
  /** The renewal round under way, if any. */
  private round: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastStatusCheck = Date.now();
  private readonly now: () => Date;
  private readonly warn: (message: string) => void;

  constructor(
    private readonly http: KubeHttp,
    private readonly options: NodeSetOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.warn = options.onWarning ?? (() => {});
  }

  /** The node as registered (the kubelet's own record of it), or undefined when not this agent's. */
  get(name: string): KubeObject | undefined {
    return this.nodes.get(name);
  }

  names(): string[] {
    return [...this.nodes.keys()];
  }

  isReady(name: string): boolean {
    return this.nodes.has(name) && !this.down.has(name);
  }

  /** Registers every node (an existing one is taken over and reported healthy), takes its lease, then renews them all every 10 s. */
  async register(): Promise<void> {
    await Promise.all(
      this.options.nodes.map(async (n, i) => {
        const manifest = nodeObject(n, i, this.options.podsPerNode?.get(n.name) ?? 0, rfc3339(this.now()));
        let node: KubeObject;
        try {
          node = await this.http.request<KubeObject>('POST', '/api/v1/nodes', manifest);
        } catch (err) {
          if (!(err instanceof KubeHttpError && err.code === 409)) throw err;
          node = await this.reportReadiness(n.name, true);
        }
        this.nodes.set(n.name, node);
        await this.renew(n.name);
      }),
    );
    // One round at a time: on a slow machine a round can outlast the interval, and two rounds at
    // once left a renewal in flight that setReady(false) did not know of (it landed after the node
    // went silent; seen in node-agent.test under load).
    this.timer = setInterval(() => {
      this.round ??= this.renewAll().finally(() => (this.round = undefined));
    }, this.options.renewMs ?? RENEW_MS);
    this.timer.unref();
  }

  /** The NotReady fault (ready = false: silent from now on) and its end (Ready reported, lease renewed). */
  async setReady(name: string, ready: boolean): Promise<void> {
    if (!this.nodes.has(name))
      throw new KubeHttpError(404, { reason: 'NotFound', message: `nodes "${name}" not found` }, 'node');
    if (!ready) {
      this.down.add(name);
      await this.renewing.get(name)?.catch(() => undefined);
      return;
    }
    this.down.delete(name);
    this.nodes.set(name, await this.reportReadiness(name, true));
    await this.renew(name);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async renewAll(): Promise<void> {
    const checkStatus = Date.now() - this.lastStatusCheck >= (this.options.statusCheckMs ?? STATUS_CHECK_MS);
    if (checkStatus) this.lastStatusCheck = Date.now();
    for (const name of this.nodes.keys()) {
      if (this.down.has(name)) continue;
      const renewal = this.renew(name);
      this.renewing.set(name, renewal);
      try {
        await renewal;
        if (checkStatus && !this.down.has(name)) await this.reassertReady(name);
      } catch (err) {
        this.warn(`lease of node ${name}: ${(err as Error).message}`);
      } finally {
        if (this.renewing.get(name) === renewal) this.renewing.delete(name);
      }
    }
  }

  /** Reports the node Ready again if the API says otherwise (a kubelet posts a status that differs from its own). */
  private async reassertReady(name: string): Promise<void> {
    const current = await this.http.request<KubeObject>('GET', `/api/v1/nodes/${name}`);
    const ready = ((current.status as { conditions?: PodCondition[] } | undefined)?.conditions ?? []).find(
      (c) => c.type === 'Ready',
    );
    if (ready?.status === 'True' || this.down.has(name)) return;
    this.nodes.set(name, await this.reportReadiness(name, true));
  }

  /** Creates or renews the node's Lease (a PUT with the version last seen; a conflict re-reads it). */
  private async renew(name: string, retry = true): Promise<void> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
    const node = this.nodes.get(name);
    const spec = {
      holderIdentity: name,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      renewTime: microTime(this.now()),
    };
    const version = this.leaseVersions.get(name);
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: 'kube-node-lease',
        ...(version ? { resourceVersion: version } : {}),
        ...(node?.metadata.uid
          ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid }] }
          : {}),
      },
      spec,
    };
    try {
      const lease = version
        ? await this.http.request<KubeObject>('PUT', path, body)
        : await this.http.request<KubeObject>(
            'POST',
            '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
            body,
          );
      this.leaseVersions.set(name, lease.metadata.resourceVersion ?? '');
    } catch (err) {
      if (!retry || !(err instanceof KubeHttpError && (err.code === 409 || err.code === 404))) throw err;
      // Someone else wrote it (or it is gone): read what is there and write over it.
      const current = await this.http.request<KubeObject>('GET', path).catch(() => undefined);
      if (current) this.leaseVersions.set(name, current.metadata.resourceVersion ?? '');
      else this.leaseVersions.delete(name);
      await this.renew(name, false);
    }
  }

  /** PATCHes nodes/status: Ready (and the pressure conditions) healthy, or every condition Unknown. */
  private async reportReadiness(name: string, ready: boolean): Promise<KubeObject> {
    const current = await this.http.request<KubeObject>('GET', `/api/v1/nodes/${name}`);
    const conditions = ((current.status as { conditions?: PodCondition[] } | undefined)?.conditions ??
      []) as PodCondition[];
    const patch = { status: { conditions: nodeConditionsWithReadiness(conditions, ready, rfc3339(this.now())) } };
    return this.http.request<KubeObject>(
      'PATCH',
      `/api/v1/nodes/${name}/status`,
      patch,
      'application/strategic-merge-patch+json',
    );
  }
}
