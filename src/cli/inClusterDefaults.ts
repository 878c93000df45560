// Defaults for a run inside a pod (a Job or CronJob): nobody watches a terminal, a log collector
// reads stdout, and Prometheus scrapes the pod's IP. Outside a pod the metrics server keeps to
// loopback. The flags, when given, always win.
import { configSourceOf } from '../cluster/configSource.js';

export interface InClusterFacts {
  /** kwave will use the pod's service account (no --kubeconfig, $KUBECONFIG or ~/.kube/config). */
  inCluster: boolean;
  stdoutIsTTY: boolean;
  outputGiven: boolean;
  metricsAddressGiven: boolean;
}

/** The metrics address outside a pod: loopback, so the port stays private to the machine. */
export const METRICS_ADDRESS = '127.0.0.1:9464';

/** The in-cluster metrics address: every interface, so the pod's IP can be scraped. */
const IN_CLUSTER_METRICS_ADDRESS = '0.0.0.0:9464';

/** Overrides of the usual defaults; empty outside a pod. */
export function inClusterDefaults(f: InClusterFacts): { output?: 'json'; metricsAddress?: string } {
  if (!f.inCluster) return {};
  return {
    ...(f.outputGiven || f.stdoutIsTTY ? {} : { output: 'json' as const }),
    ...(f.metricsAddressGiven ? {} : { metricsAddress: IN_CLUSTER_METRICS_ADDRESS }),
  };
}

/** Whether kwave runs in a pod: it would connect with the pod's service account (no kubeconfig found). */
export function runsInPod(kubeconfig: string | undefined, env: NodeJS.ProcessEnv, home?: string): boolean {
  return configSourceOf(kubeconfig, env, home).kind === 'in-cluster';
}
