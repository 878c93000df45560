// What a real kubelet (`kwave-control-plane kubelet`, controlplane/kubelet.go) is given: the image
// catalog its CRI layer reads — the simulator's own image table, step timings and per-node missing
// images, so that both kubelets pull, crash and turn ready the same images alike — and its command
// line. Pure: the table and the node in, JSON and arguments out.
import { DEFAULT_TIMING, type Timing } from '../clock.js';
import type { FixtureNode } from '../fixture.js';
import type { ImageTable } from '../images.js';
import { nodeSize } from '../world.js';

/** The catalog file, as controlplane/kubelet_catalog.go reads it (durations in ms before scaling). */
export interface KubeletCatalog {
  timeScale: number;
  timing: { pullMs: number; startMs: number; stopMs: number; crashMs: number };
  images: {
    name: string;
    repository: string;
    digest: string;
    servesDigest?: string;
    sizeBytes: number;
    pullMs?: number;
    pullFails: boolean;
    crash: boolean;
    readyAfterMs?: number;
  }[];
  missingImages: Record<string, readonly string[]>;
}

export function kubeletCatalog(
  images: ImageTable,
  timing: Partial<Timing>,
  timeScale: number,
  missingImages: Readonly<Record<string, readonly string[]>> = {},
): KubeletCatalog {
  const t = { ...DEFAULT_TIMING, ...timing };
  return {
    timeScale,
    timing: { pullMs: t.pullMs, startMs: t.startMs, stopMs: t.stopMs, crashMs: t.crashMs },
    images: images.entries().map((i) => ({
      name: i.fullName,
      repository: i.repository,
      digest: i.digest,
      ...(i.servesDigest ? { servesDigest: i.servesDigest } : {}),
      sizeBytes: i.sizeBytes,
      ...(i.pullMs === undefined ? {} : { pullMs: i.pullMs }),
      pullFails: i.pullFails,
      crash: i.crash,
      ...(i.readyAfterMs === undefined ? {} : { readyAfterMs: i.readyAfterMs }),
    })),
    missingImages: { ...missingImages },
  };
}

export interface KubeletArgsInput {
  node: FixtureNode;
  /** The node's place in the fixture: its pod CIDR, as world.ts gives the simulated nodes theirs. */
  index: number;
  rootDir: string;
  catalogPath: string;
  bootstrapKubeconfig: string;
  port: number;
  maxPods: number;
  /** The Lease is renewed every quarter of this. */
  leaseDurationSeconds: number;
  statusUpdateMs: number;
}

/** The labels the simulated nodes carry that a kubelet does not set itself (world.ts's nodeObject). */
export function nodeLabels(node: FixtureNode): Record<string, string> {
  return {
    'topology.kubernetes.io/region': 'sim',
    ...(node.zone ? { 'topology.kubernetes.io/zone': node.zone } : {}),
    ...node.labels,
  };
}

export function kubeletArgs(i: KubeletArgsInput): string[] {
  const labels = Object.entries(nodeLabels(i.node))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const { cpu, memory } = nodeSize(i.node);
  return [
    `--name=${i.node.name}`,
    `--root-dir=${i.rootDir}`,
    `--images=${i.catalogPath}`,
    `--bootstrap-kubeconfig=${i.bootstrapKubeconfig}`,
    `--port=${i.port}`,
    `--pod-cidr=10.${(100 + i.index) % 256}.0.0/16`,
    `--node-labels=${labels}`,
    `--max-pods=${i.maxPods}`,
    // The size the simulated nodes have, so that both kubelets admit pods and resizes alike.
    `--cpu=${cpu}`,
    `--memory=${memory}`,
    `--lease-duration-seconds=${i.leaseDurationSeconds}`,
    `--node-status-update-frequency=${i.statusUpdateMs}ms`,
  ];
}
