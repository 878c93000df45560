// Which kubeconfig kwave would use (the --kubeconfig flag, $KUBECONFIG, ~/.kube/config, or the
// in-cluster service account), without loading it. Apart from connect.ts so that every command's
// start (which asks whether kwave runs in a pod) does not load the Kubernetes client.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterEnv {
  KUBERNETES_SERVICE_HOST?: string;
  KUBERNETES_SERVICE_PORT?: string;
  KWAVE_SERVICEACCOUNT_DIR?: string;
}

/** The folder holding `token`, `ca.crt` and `namespace` ($KWAVE_SERVICEACCOUNT_DIR overrides it: tests, or a token mounted elsewhere). */
export function serviceAccountDir(env: InClusterEnv): string {
  return env.KWAVE_SERVICEACCOUNT_DIR || SERVICE_ACCOUNT_DIR;
}

export type ConfigSource =
  | { kind: 'files'; paths: string[]; from: 'flag' | 'KUBECONFIG' | 'home' }
  | { kind: 'in-cluster'; dir: string }
  | { kind: 'none'; tried: string[] };

export interface SourceInput {
  /** The --kubeconfig flag. */
  flag?: string;
  env: { KUBECONFIG?: string } & InClusterEnv;
  home?: string;
  exists: (file: string) => boolean;
  /** Separator of $KUBECONFIG entries (':' on POSIX). */
  delimiter?: string;
}

/**
 * Where the configuration comes from, in kubectl's order:
 * 1. `--kubeconfig FILE` (used even if missing, so the error names it);
 * 2. `$KUBECONFIG` — a list of files, merged, first wins; missing entries are skipped;
 * 3. `~/.kube/config` if it exists;
 * 4. the in-cluster service account, when `KUBERNETES_SERVICE_HOST` and `_PORT` are set (its
 *    folder: $KWAVE_SERVICEACCOUNT_DIR, else /var/run/secrets/kubernetes.io/serviceaccount).
 */
export function chooseConfigSource(input: SourceInput): ConfigSource {
  if (input.flag) return { kind: 'files', paths: [input.flag], from: 'flag' };
  const tried: string[] = [];
  const fromEnv = (input.env.KUBECONFIG ?? '').split(input.delimiter ?? path.delimiter).filter(Boolean);
  if (fromEnv.length > 0) {
    const present = fromEnv.filter((f) => input.exists(f));
    if (present.length > 0) return { kind: 'files', paths: present, from: 'KUBECONFIG' };
    tried.push(...fromEnv.map((f) => `${f} (from $KUBECONFIG)`));
  } else if (input.home) {
    const file = path.join(input.home, '.kube', 'config');
    if (input.exists(file)) return { kind: 'files', paths: [file], from: 'home' };
    tried.push(file);
  }
  if (input.env.KUBERNETES_SERVICE_HOST && input.env.KUBERNETES_SERVICE_PORT)
    return { kind: 'in-cluster', dir: serviceAccountDir(input.env) };
  tried.push('in-cluster service account (KUBERNETES_SERVICE_HOST is not set)');
  return { kind: 'none', tried };
}

/** The source `connect` would use for these flags and environment (reads only whether files exist). */
export function configSourceOf(
  kubeconfig: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): ConfigSource {
  return chooseConfigSource({
    flag: kubeconfig,
    env: {
      KUBECONFIG: env.KUBECONFIG,
      KUBERNETES_SERVICE_HOST: env.KUBERNETES_SERVICE_HOST,
      KUBERNETES_SERVICE_PORT: env.KUBERNETES_SERVICE_PORT,
      KWAVE_SERVICEACCOUNT_DIR: env.KWAVE_SERVICEACCOUNT_DIR,
    },
    home,
    exists: existsSync,
  });
}
