// kwave as a Job's pod would run it, on the real control plane: deploy/'s ServiceAccount with a
// token from the TokenRequest API, written where the kubelet projects it (token, ca.crt,
// namespace), the KUBERNETES_SERVICE_* variables, an empty HOME and no KUBECONFIG: nothing else.
// Also the RBAC of deploy/ as objects (to apply, to take a rule away): rbac.yaml, the optional
// features' Roles of deploy/optional/ and the approvers' Roles of approver.yaml; and the audit log
// of what the ServiceAccount did.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../../../src/sim/controlPlane/index.js';
import { KubeHttp } from '../../../src/sim/agent/kubeHttp.js';
import type { AuditRecord } from '../../../src/sim/controlPlane/audit.js';
import { BIN, CHILD_LIMITS, ROOT } from './kwaveBin.js';
import { follow, type RunningKwave } from './rolloutCli.js';

const SA_NAMESPACE = 'kwave';
const SA_NAME = 'kwave';
export const SA_USER = `system:serviceaccount:${SA_NAMESPACE}:${SA_NAME}`;

interface RbacRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export interface RbacObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: RbacRule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  /** The file of deploy/ that declares it (not sent to the API server). */
  file?: string;
  [k: string]: unknown;
}

/** The files of deploy/ that declare namespaces and RBAC: the default install and the optional Roles. */
const DEPLOY_RBAC_FILES = [
  'deploy/namespace.yaml',
  'deploy/rbac.yaml',
  'deploy/approver.yaml',
  'deploy/optional/pre-pull/rbac.yaml',
  'deploy/optional/owners-update/rbac.yaml',
  'deploy/optional/resize/rbac.yaml',
];

/** The objects deploy/'s namespace and RBAC files declare, each with its file. */
export function deployObjects(): RbacObject[] {
  return DEPLOY_RBAC_FILES.flatMap((f) =>
    parseAllDocuments(readFileSync(join(ROOT, f), 'utf8')).map((d) => ({ ...(d.toJS() as RbacObject), file: f })),
  );
}

/** The object as sent to the API server (without the file it came from). */
export function apiObject(o: RbacObject): RbacObject {
  const { file: _file, ...rest } = o;
  return rest;
}

/** One permission a Role or ClusterRole of deploy/ grants kwave's ServiceAccount. */
export interface Grant {
  kind: 'Role' | 'ClusterRole';
  name: string;
  /** What kwave names as granting it when it is missing: `deploy/rbac.yaml`, or an optional feature's folder and Role. */
  source: string;
  /** The Role's namespace; undefined for a ClusterRole (granted everywhere). */
  namespace?: string;
  group: string;
  /** With its subresource: `pods/status`. */
  resource: string;
  verb: string;
}

/** The grants of the Roles and ClusterRoles bound to kwave's ServiceAccount (the approvers' are not). */
export function grantsOf(objects: RbacObject[]): Grant[] {
  const bound = (o: RbacObject) =>
    objects.some(
      (b) =>
        (b.kind === 'RoleBinding' || b.kind === 'ClusterRoleBinding') &&
        b.roleRef?.kind === o.kind &&
        b.roleRef.name === o.metadata.name &&
        b.metadata.namespace === o.metadata.namespace &&
        (b.subjects ?? []).some(
          (s) => s.kind === 'ServiceAccount' && s.name === SA_NAME && s.namespace === SA_NAMESPACE,
        ),
    );
  const sourceOf = (o: RbacObject) => {
    const optional = /^(deploy\/optional\/[^/]+)\//.exec(o.file ?? '');
    return optional ? `${optional[1]} (Role ${o.metadata.name})` : (o.file ?? 'deploy/rbac.yaml');
  };
  return objects
    .filter((o) => (o.kind === 'Role' || o.kind === 'ClusterRole') && bound(o))
    .flatMap((o) =>
      (o.rules ?? []).flatMap((r) =>
        r.apiGroups.flatMap((group) =>
          r.resources.flatMap((resource) =>
            r.verbs.map((verb) => ({
              kind: o.kind as Grant['kind'],
              name: o.metadata.name,
              source: sourceOf(o),
              ...(o.kind === 'Role' ? { namespace: o.metadata.namespace } : {}),
              group,
              resource,
              verb,
            })),
          ),
        ),
      ),
    );
}

/** The same role without one verb on one resource (a rule left with no verb is dropped). */
export function withoutVerb(role: RbacObject, group: string, resource: string, verb: string): RbacObject {
  // A rule naming several resources is split: only `resource` loses the verb, the others keep it.
  const rules = (role.rules ?? [])
    .flatMap((r) => {
      if (!(r.apiGroups.includes(group) && r.resources.includes(resource))) return [r];
      const others = r.resources.filter((x) => x !== resource);
      return [
        { ...r, resources: [resource], verbs: r.verbs.filter((v) => v !== verb) },
        ...(others.length > 0 ? [{ ...r, resources: others }] : []),
      ];
    })
    .filter((r) => r.verbs.length > 0);
  return { ...role, rules };
}

/** The API path of a namespaced or cluster-scoped RBAC object. */
export function rbacPath(o: Pick<RbacObject, 'kind' | 'metadata'>): string {
  const plural = `${o.kind.toLowerCase()}s`;
  const base = '/apis/rbac.authorization.k8s.io/v1';
  return o.metadata.namespace
    ? `${base}/namespaces/${o.metadata.namespace}/${plural}/${o.metadata.name}`
    : `${base}/${plural}/${o.metadata.name}`;
}

/** A "Job pod": its service-account folder and environment, with a fresh token from TokenRequest. */
export interface PodIdentity {
  dir: string;
  env: NodeJS.ProcessEnv;
  token: string;
}

/** A pod of ServiceAccount `account` (in kwave's namespace; default kwave's own). */
export async function podIdentity(cp: ControlPlane, admin: KubeHttp, account = SA_NAME): Promise<PodIdentity> {
  const answer = await admin.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${SA_NAMESPACE}/serviceaccounts/${account}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    },
  );
  const dir = mkdtempSync(join(tmpdir(), 'kwave-pod-'));
  const sa = join(dir, 'serviceaccount');
  const home = join(dir, 'home');
  mkdirSync(sa);
  mkdirSync(home);
  writeFileSync(join(sa, 'token'), answer.status.token, { mode: 0o600 });
  writeFileSync(join(sa, 'ca.crt'), cp.caPem);
  writeFileSync(join(sa, 'namespace'), SA_NAMESPACE);
  const url = new URL(cp.url);
  return {
    dir,
    token: answer.status.token,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      KWAVE_SERVICEACCOUNT_DIR: sa,
    },
  };
}

/** `node bin/kwave.js ARGS` with only the pod's environment. */
export function startInPod(pod: PodIdentity, args: string[], children: Set<ChildProcess>): RunningKwave {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: pod.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...CHILD_LIMITS,
  });
  children.add(child);
  return follow(child, () => children.delete(child));
}

/** Whether the ServiceAccount may do it now, asked as the ServiceAccount (RBAC changes reach the authorizer's cache a moment after the write). */
async function mayDo(asPod: KubeHttp, g: Pick<Grant, 'group' | 'resource' | 'verb' | 'namespace'>): Promise<boolean> {
  const [resource, subresource] = g.resource.split('/');
  const review = await asPod.request<{ status: { allowed?: boolean } }>(
    'POST',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          verb: g.verb,
          group: g.group,
          resource,
          ...(subresource ? { subresource } : {}),
          ...(g.namespace ? { namespace: g.namespace } : {}),
        },
      },
    },
  );
  return review.status.allowed === true;
}

/** Waits (bounded) until the authorizer answers `allowed` for the grant. */
export async function untilAuthorizer(
  asPod: KubeHttp,
  g: Pick<Grant, 'group' | 'resource' | 'verb' | 'namespace'>,
  allowed: boolean,
  boundMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  while ((await mayDo(asPod, g)) !== allowed) {
    if (Date.now() > deadline)
      throw new Error(`the authorizer still says ${!allowed} for ${g.verb} ${g.resource} after ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** An audit record's permission key: `patch  pods/status  web` (group, resource/sub, verb, namespace). */
export interface UsedPermission {
  group: string;
  resource: string;
  verb: string;
  namespace: string | undefined;
  ok: number;
  refused: number;
}

export function usedPermissions(records: AuditRecord[], user: string): UsedPermission[] {
  const byKey = new Map<string, UsedPermission>();
  for (const r of records) {
    if (r.user !== user) continue;
    const resource = r.resource
      ? r.subresource
        ? `${r.resource}/${r.subresource}`
        : r.resource
      : `nonResourceURL ${r.path}`;
    const key = [r.apiGroup ?? '', resource, r.verb, r.namespace ?? ''].join('|');
    const u = byKey.get(key) ?? {
      group: r.apiGroup ?? '',
      resource,
      verb: r.verb,
      namespace: r.namespace,
      ok: 0,
      refused: 0,
    };
    if (r.code === 403) u.refused++;
    else u.ok++;
    byKey.set(key, u);
  }
  return [...byKey.values()].sort((a, b) => `${a.resource} ${a.verb}`.localeCompare(`${b.resource} ${b.verb}`));
}

/** The grant that allows a used permission, if any. */
export function grantFor(used: UsedPermission, grants: Grant[]): Grant | undefined {
  return grants.find(
    (g) =>
      g.group === used.group &&
      g.resource === used.resource &&
      g.verb === used.verb &&
      (g.kind === 'ClusterRole' || g.namespace === used.namespace),
  );
}
