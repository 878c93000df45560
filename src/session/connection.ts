// The cluster a command or a library user talks to: a kubeconfig and context, and the client-side
// API rate limit (--kube-api-qps / --kube-api-burst over the plan's strategy over the default).
import { chooseRateLimit, connect, type Cluster } from '../cluster/index.js';
import type { Plan } from '../plan/types.js';

/** How to reach the API server; the CLI's common flags are one. */
export interface ConnectionOptions {
  /** Default: $KUBECONFIG, ~/.kube/config, or the pod's service account. */
  kubeconfig?: string;
  /** The kubeconfig context; default: the current one. */
  context?: string;
  /** Client-side API rate limit, over the plan's. */
  kubeApiQps?: number;
  kubeApiBurst?: number;
  /** Send a token or client key to an `http://` server (`--insecure-send-credentials-over-http`). */
  allowCredentialsOverHttp?: boolean;
}

export function connectFor(connection: ConnectionOptions, env: NodeJS.ProcessEnv, plan?: Plan): Cluster {
  const rateLimit = chooseRateLimit({
    flags: { qps: connection.kubeApiQps, burst: connection.kubeApiBurst },
    plan: plan && { qps: plan.strategy.kubeApiQps, burst: plan.strategy.kubeApiBurst },
  });
  return connect({
    kubeconfig: connection.kubeconfig,
    context: connection.context,
    env,
    rateLimit,
    allowCredentialsOverHttp: connection.allowCredentialsOverHttp,
  });
}
