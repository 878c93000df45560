// Who may talk to the real control plane: static bearer tokens (kube-apiserver's --token-auth-file),
// one per identity, fresh random tokens each start. Pure apart from the random source.
//
// - the admin, in system:masters (kubectl and kwave in tests; the kubeconfig's default user);
// - system:kube-controller-manager and system:kube-scheduler, the names the default RBAC roles
//   are bound to, exactly as the components authenticate on a real cluster;
// - the node agent (kwave's kubelet model), in system:masters: it serves many nodes, while the Node
//   authorizer and NodeRestriction let one system:node:NAME identity write only its own node and
//   the pods bound to it; the agent's own user name keeps its requests apart in the audit log;
// - any extra test users asked for, with the groups asked for (none: RBAC grants them nothing).
import { randomBytes } from 'node:crypto';

export interface Identity {
  user: string;
  groups: string[];
  token: string;
}

export interface ExtraUser {
  name: string;
  groups?: string[];
}

export const ADMIN_USER = 'kwave-admin';
export const AGENT_USER = 'kwave-node-agent';
export const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';
export const SCHEDULER_USER = 'system:kube-scheduler';

export function identities(extra: ExtraUser[] = []): Identity[] {
  const token = () => randomBytes(24).toString('hex');
  const builtIn = [
    { user: ADMIN_USER, groups: ['system:masters'] },
    { user: AGENT_USER, groups: ['system:masters'] },
    { user: CONTROLLER_MANAGER_USER, groups: [] },
    { user: SCHEDULER_USER, groups: [] },
  ];
  const taken = new Set(builtIn.map((i) => i.user));
  for (const u of extra) {
    if (!/^[A-Za-z0-9:._@-]+$/.test(u.name))
      throw new Error(`control plane: user name ${JSON.stringify(u.name)} may hold only letters, digits and : . _ @ -`);
    if (taken.has(u.name)) throw new Error(`control plane: user ${u.name} is given twice`);
    taken.add(u.name);
  }
  return [...builtIn, ...extra.map((u) => ({ user: u.name, groups: u.groups ?? [] }))].map((i) => ({
    ...i,
    token: token(),
  }));
}

/** The --token-auth-file: `token,user,uid,"group1,group2"` per line. */
export function renderTokenFile(ids: Identity[]): string {
  return ids
    .map((i) => `${i.token},${i.user},${i.user}${i.groups.length ? `,"${i.groups.join(',')}"` : ''}\n`)
    .join('');
}
