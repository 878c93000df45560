// The kubeconfig a client uses to reach the simulated cluster: server URL, CA data and bearer
// token, under a context named `kwave-sim` (or the one asked for); and writing it for other processes.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
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

/** Writes a kubeconfig whole or not at all (readers never see half of one), mode 0600: it holds a token. */
export async function writeKubeconfig(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, path);
}
