// Credentials never go over plain http://: a kubeconfig whose cluster is served over http and whose
// user has a bearer token, a client key, a password or a plugin that makes a token is refused
// (exit 2) unless the caller says it accepts the risk (--insecure-send-credentials-over-http).
// Pure: reads only the KubeConfig it is given.
import type { KubeConfig } from '@kubernetes/client-node';

/** What the current user of `kc` would send, in words; empty when it sends nothing. */
function credentialsOf(user: NonNullable<ReturnType<KubeConfig['getCurrentUser']>>): string[] {
  const carried: string[] = [];
  if (user.token) carried.push('a bearer token');
  if (user.keyData || user.keyFile) carried.push('a client key');
  if (user.password) carried.push('a password');
  if (user.exec) carried.push('an exec plugin (its token)');
  if (user.authProvider) carried.push('an auth provider (its token)');
  return carried;
}

/** Why the current context must not be used over http (and the warning when the flag allows it), or undefined when it may. */
export function credentialsOverHttp(kc: KubeConfig): { refusal: string; warning: string } | undefined {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster || !user) return undefined;
  let protocol: string;
  try {
    protocol = new URL(cluster.server).protocol;
  } catch {
    return undefined;
  }
  if (protocol !== 'http:') return undefined;
  const carried = credentialsOf(user);
  if (carried.length === 0) return undefined;
  const what = `cluster "${cluster.name}" is served over plain http:// and user "${user.name}" has ${carried.join(', ')}`;
  return {
    refusal:
      `${what}: kwave does not send credentials unencrypted. Use the https:// address of the API server, or pass ` +
      '--insecure-send-credentials-over-http if anyone who can watch this network may have them',
    warning: `warning: ${what}: sent unencrypted (--insecure-send-credentials-over-http)`,
  };
}
