// The cluster a command talks to: the common flags' kubeconfig and context, and the client-side
// API rate limit (--kube-api-qps / --kube-api-burst over the plan's strategy over the default).
import { chooseRateLimit, connect, type Cluster } from '../cluster/index.js';
import type { Plan } from '../plan/types.js';
import type { CommonOptions } from './context.js';

export function connectFor(common: CommonOptions, env: NodeJS.ProcessEnv, plan?: Plan): Cluster {
  const rateLimit = chooseRateLimit({
    flags: { qps: common.kubeApiQps, burst: common.kubeApiBurst },
    plan: plan && { qps: plan.strategy.kubeApiQps, burst: plan.strategy.kubeApiBurst },
  });
  return connect({
    kubeconfig: common.kubeconfig,
    context: common.context,
    env,
    rateLimit,
    allowCredentialsOverHttp: common.allowCredentialsOverHttp,
  });
}
