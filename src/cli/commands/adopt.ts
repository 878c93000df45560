// `kwave adopt -n NS -l SELECTOR [--condition-type T] [--dry-run]`: pods created with the
// readiness gate in spec.readinessGates but no condition of that type never become Ready (the
// kubelet waits for the condition). Adopt sets it True on exactly those pods, one status patch
// each; pods whose condition exists (True, or False mid-rollout) are left alone. Pods that do not
// declare the gate are listed: Kubernetes allows no later addition of a readiness gate, so only
// recreating them from a template that declares it helps. Exit 0; 1 if a patch failed.
import type { V1Pod } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import { ExitCode, KwaveError } from '../../errors.js';
import { KubeError, wrapKube, type Cluster, type PodConditionPatch } from '../../cluster/index.js';
import { connectFor } from '../../session/connection.js';
import { conditionStatus, declaresGate } from '../../inplace/podView.js';
import { DNS_LABEL_EXPECTED, dnsLabelProblem } from '../../plan/k8sNames.js';
import type { CommandContext } from '../context.js';
import { count } from '../output/text.js';

export const ADOPTED_REASON = 'KwaveAdopted';
const ADOPTED_MESSAGE = 'set by kwave adopt: the pod declares this readiness gate but had no condition for it';
/** Status patches in flight at once. */
const PARALLEL = 10;

export interface Adoption {
  /** Declare the gate, have no condition: to be set True. */
  adopt: string[];
  /** Already have the condition, by its status (`True`, `False`, …). */
  present: { name: string; status: string }[];
  /** Do not declare the gate: cannot be adopted. */
  notDeclared: string[];
  /** Being deleted: left alone. */
  terminating: string[];
}

/** Sorts the listed pods by what adopt can do for them. Pure. */
export function classifyForAdoption(pods: readonly V1Pod[], conditionType: string): Adoption {
  const out: Adoption = { adopt: [], present: [], notDeclared: [], terminating: [] };
  const sorted = [...pods].sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '', 'en', { numeric: true }),
  );
  for (const pod of sorted) {
    const name = pod.metadata?.name;
    if (!name) continue;
    if (pod.metadata?.deletionTimestamp) out.terminating.push(name);
    else if (!declaresGate(pod, conditionType)) out.notDeclared.push(name);
    else {
      const status = conditionStatus(pod, conditionType);
      if (status === undefined) out.adopt.push(name);
      else out.present.push({ name, status });
    }
  }
  return out;
}

export interface AdoptResult {
  adopted: string[];
  /** Gone between the list and the patch. */
  vanished: string[];
  failed: { name: string; error: string }[];
}

/** Sets the condition True on each pod; a pod that is gone (404) is noted, other errors collected. */
export async function adoptPods(
  patch: (name: string, condition: PodConditionPatch) => Promise<unknown>,
  names: readonly string[],
  conditionType: string,
): Promise<AdoptResult> {
  const result: AdoptResult = { adopted: [], vanished: [], failed: [] };
  const limit = pLimit(PARALLEL);
  const condition: PodConditionPatch = {
    type: conditionType,
    status: 'True',
    reason: ADOPTED_REASON,
    message: ADOPTED_MESSAGE,
  };
  await Promise.all(
    names.map((name) =>
      limit(async () => {
        try {
          await patch(name, condition);
          result.adopted.push(name);
        } catch (err) {
          if (err instanceof KubeError && err.code === 404) result.vanished.push(name);
          else result.failed.push({ name, error: err instanceof Error ? err.message : String(err) });
        }
      }),
    ),
  );
  const byName = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
  result.adopted.sort(byName);
  result.vanished.sort(byName);
  result.failed.sort((a, b) => byName(a.name, b.name));
  return result;
}

function names(list: readonly string[]): string[] {
  return list.map((n) => `  ${n}`);
}

export function renderAdoptText(
  a: Adoption,
  r: AdoptResult | undefined,
  where: { namespace: string; selector: string; conditionType: string },
): string[] {
  const total = a.adopt.length + a.present.length + a.notDeclared.length + a.terminating.length;
  const out = [
    `${count(total, 'pod')} in namespace ${where.namespace} match ${where.selector}; readiness gate ${where.conditionType}`,
  ];
  if (total === 0) return out;
  if (r === undefined) {
    out.push(
      a.adopt.length > 0
        ? `would adopt ${count(a.adopt.length, 'pod')} (gate declared, no condition yet; --dry-run: nothing written):`
        : 'nothing to adopt: no pod declares the gate without its condition',
    );
    out.push(...names(a.adopt));
  } else {
    if (r.adopted.length > 0)
      out.push(
        `adopted ${count(r.adopted.length, 'pod')}: condition ${where.conditionType} set True (reason ${ADOPTED_REASON}):`,
        ...names(r.adopted),
      );
    else if (a.adopt.length === 0) out.push('nothing to adopt: no pod declares the gate without its condition');
    if (r.vanished.length > 0)
      out.push(`gone before adoption: ${count(r.vanished.length, 'pod')}:`, ...names(r.vanished));
    if (r.failed.length > 0)
      out.push(`FAILED to adopt ${count(r.failed.length, 'pod')}:`, ...r.failed.map((f) => `  ${f.name}: ${f.error}`));
  }
  if (a.present.length > 0) {
    const byStatus = new Map<string, number>();
    for (const p of a.present) byStatus.set(p.status, (byStatus.get(p.status) ?? 0) + 1);
    const detail = [...byStatus].map(([s, n]) => `${n} ${s}`).join(', ');
    out.push(`already have the condition: ${count(a.present.length, 'pod')} (${detail}); left alone`);
    const notTrue = a.present.filter((p) => p.status !== 'True');
    if (notTrue.length > 0)
      out.push(...notTrue.map((p) => `  ${p.name}: ${p.status} (a rollout may hold it; kwave status shows which)`));
  }
  if (a.notDeclared.length > 0) {
    out.push(
      `cannot adopt ${count(a.notDeclared.length, 'pod')}: no ${where.conditionType} in spec.readinessGates, and Kubernetes allows no later addition; recreate them from a template that declares it:`,
      ...names(a.notDeclared),
    );
  }
  if (a.terminating.length > 0)
    out.push(`being deleted, left alone: ${count(a.terminating.length, 'pod')}:`, ...names(a.terminating));
  return out;
}

async function listPods(cluster: Cluster, namespace: string, selector: string): Promise<V1Pod[]> {
  const list = () =>
    cluster.listPods(namespace, { labelSelector: selector }).catch((err: unknown) => {
      if (!(err instanceof KubeError && err.code === 400)) throw err;
      throw new KwaveError(
        'USAGE',
        `-l ${selector}: the API server refused the label selector: ${err.message}`,
        ExitCode.BAD_INPUT,
      );
    });
  return (await wrapKube(list, `listing pods in namespace ${namespace}`)).items;
}

export async function run(ctx: CommandContext, _args: string[], opts: Record<string, unknown>): Promise<number> {
  const { io, common } = ctx;
  const namespace = String(opts.namespace);
  const badNamespace = dnsLabelProblem(namespace);
  // Refused here rather than sent: the path segment is escaped, but a non-name is a typo or worse.
  if (badNamespace)
    throw new KwaveError('USAGE', `-n: expected ${DNS_LABEL_EXPECTED}, found ${badNamespace}`, ExitCode.BAD_INPUT);
  const selector = String(opts.selector);
  const conditionType = String(opts.conditionType ?? 'kwave.dev/in-place-ready');
  const dryRun = opts.dryRun === true;
  const cluster = connectFor(common, io.env);
  try {
    const adoption = classifyForAdoption(await listPods(cluster, namespace, selector), conditionType);
    const result = dryRun
      ? undefined
      : await adoptPods((name, c) => cluster.patchPodCondition(namespace, name, c), adoption.adopt, conditionType);
    if (common.output === 'json') {
      io.stdout.write(
        JSON.stringify({
          namespace,
          selector,
          conditionType,
          dryRun,
          ...(dryRun
            ? { wouldAdopt: adoption.adopt }
            : { adopted: result!.adopted, vanished: result!.vanished, failed: result!.failed }),
          present: adoption.present,
          notDeclared: adoption.notDeclared,
          terminating: adoption.terminating,
        }) + '\n',
      );
    } else {
      io.stdout.write(renderAdoptText(adoption, result, { namespace, selector, conditionType }).join('\n') + '\n');
    }
    return result && result.failed.length > 0 ? ExitCode.INTERNAL : ExitCode.OK;
  } finally {
    cluster.close();
  }
}
