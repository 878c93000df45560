// The kubeconfig a client uses to reach the simulated cluster: server URL, CA data and bearer
// token, under a context named `kwave-sim` (or the one asked for), or one context per cluster of
// `kwave sim --clusters N`; and writing it for other processes.
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
  return renderMultiKubeconfig([input]);
}

/**
 * One kubeconfig for several API servers: a cluster, a user and a context per entry, each named
 * by its context (default `kwave-sim`); the first is the current context. Context names must differ.
 */
export function renderMultiKubeconfig(inputs: readonly KubeconfigInput[]): string {
  if (inputs.length === 0) throw new Error('renderMultiKubeconfig: no cluster given');
  const names = inputs.map((i) => i.context ?? 'kwave-sim');
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new Error(`renderMultiKubeconfig: context "${twice}" given twice`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: inputs.map((input, i) => ({
      name: names[i],
      cluster: { server: input.server, 'certificate-authority-data': Buffer.from(input.caPem).toString('base64') },
    })),
    users: inputs.map((input, i) => ({ name: `${names[i]}-admin`, user: { token: input.token } })),
    contexts: inputs.map((input, i) => ({
      name: names[i],
      context: {
        cluster: names[i],
        user: `${names[i]}-admin`,
        ...(input.namespace ? { namespace: input.namespace } : {}),
      },
    })),
    'current-context': names[0],
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
