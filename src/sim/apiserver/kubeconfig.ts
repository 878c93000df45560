// The kubeconfig a client uses to reach the simulated cluster: server URL, CA data and bearer
// token, under a context named `kwave-sim` (or the one asked for).
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  caPem: string;
  token: string;
  context?: string;
  namespace?: string;
}

export function renderKubeconfig(input: KubeconfigInput): string {
  const name = input.context ?? 'kwave-sim';
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: input.server, 'certificate-authority-data': Buffer.from(input.caPem).toString('base64') } }],
    users: [{ name: `${name}-admin`, user: { token: input.token } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin`, ...(input.namespace ? { namespace: input.namespace } : {}) } }],
    'current-context': name,
    preferences: {},
  };
  return stringify(config);
}
