// `kwave status PLAN`: the rollout record of a plan (phase, wave, counts, pods in flight,
// failures, gates, waits, approvals) and who holds its lock. `-o json` prints one JSON object;
// `--watch` follows the record with a watch and shows each new state (redrawn on a TTY, printed
// one after another otherwise) until SIGINT/SIGTERM. Exit 0; exit 2 when the plan has no record.
import { loadPlanOrReport } from '../loadPlan.js';
import { chooseClusters, type ChosenCluster } from '../clusterChoice.js';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Cluster } from '../../cluster/cluster.js';
import { watchConfigMap } from '../../cluster/configMapWatch.js';
import { connectFor } from '../../session/connection.js';
import { KubeError, wrapKube } from '../../cluster/kubeError.js';
import { ExitCode, KwaveError } from '../../errors.js';
import type { Plan } from '../../plan/types.js';
import { recordName, type RolloutRecord } from '../../record/record.js';
import { decodeRecord, withDecisions } from '../../record/codec.js';
import { readDecisions } from '../../record/controlStore.js';
import { readLease, type LeaseView } from '../../lease/leaseView.js';
import type { CommandContext } from '../context.js';
import { renderStatus, statusJson, type StatusInput } from '../statusView.js';

/** The record's namespace: the plan's first target namespace (docs/record.md). */
export function recordNamespace(plan: Plan): string {
  return plan.target.namespaces[0]!;
}

/** The refusal of a command that needs the plan's record when there is none (exit 2). */
export function notRun(plan: Plan): KwaveError {
  return new KwaveError(
    'REFUSED',
    `plan ${plan.name} has not been run in namespace ${recordNamespace(plan)} (no rollout record ConfigMap ${recordName(plan.name)})`,
    ExitCode.BAD_INPUT,
  );
}

/** The record as data, with people's decisions (decisionsOf), or a KwaveError saying it is damaged. */
export function recordOf(plan: Plan, cm: V1ConfigMap, decisions: V1ConfigMap | undefined): RolloutRecord {
  const decoded = decodeRecord(cm);
  if (decoded.ok) return withDecisions(decoded.record, decisions);
  throw new KwaveError(
    'KUBE',
    `the rollout record ConfigMap ${recordNamespace(plan)}/${recordName(plan.name)} is damaged: ${decoded.problem}`,
    ExitCode.INTERNAL,
  );
}

/** GET the record's ConfigMap; undefined on 404; other failures as KwaveError. */
export async function readRecordConfigMap(cluster: Cluster, plan: Plan): Promise<V1ConfigMap | undefined> {
  return wrapKube(
    () =>
      cluster.getConfigMap(recordNamespace(plan), recordName(plan.name)).catch((err: unknown) => {
        if (err instanceof KubeError && err.code === 404) return undefined;
        throw err;
      }),
    `reading the rollout record of plan ${plan.name}`,
  );
}

/**
 * The decisions ConfigMap (approvals, pause/resume/abort), for the status: undefined when there is
 * none, or when this identity may not read it (the status shows the rest).
 */
async function decisionsOf(cluster: Cluster, plan: Plan): Promise<V1ConfigMap | undefined> {
  try {
    return await readDecisions(cluster, plan.controlNamespace, plan.name);
  } catch (err) {
    if (err instanceof KubeError) return undefined;
    throw err;
  }
}

async function lockOf(cluster: Cluster, plan: Plan, now: Date): Promise<LeaseView | undefined> {
  try {
    return await readLease(cluster, recordNamespace(plan), plan.name, now);
  } catch (err) {
    // The lock is a detail of the status: show the rest without it.
    if (err instanceof KubeError) return undefined;
    throw err;
  }
}

function render(ctx: CommandContext, input: StatusInput): string {
  return ctx.common.output === 'json' ? JSON.stringify(statusJson(input)) : renderStatus(input);
}

export async function run(ctx: CommandContext, args: string[], opts: Record<string, unknown>): Promise<number> {
  const file = args[0]!;
  const plan = await loadPlanOrReport(ctx, file);
  if (!plan) return ExitCode.BAD_INPUT;
  const chosen = chooseClusters(plan, { cluster: opts.cluster, context: ctx.common.context });
  if (plan.clusters) return statusAcrossClusters(ctx, plan, file, opts.watch === true, chosen);
  const cluster = connectFor(ctx.common, ctx.io.env, plan);
  try {
    if (opts.watch) {
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        return await watchStatus(ctx, cluster, plan, file!, stop.signal);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    }
    const cm = await readRecordConfigMap(cluster, plan);
    if (!cm) throw notRun(plan);
    const record = recordOf(plan, cm, await decisionsOf(cluster, plan));
    const now = new Date();
    const lock = await lockOf(cluster, plan, now);
    ctx.io.stdout.write(
      render(ctx, { record, namespace: recordNamespace(plan), planFile: file, now, ...(lock ? { lock } : {}) }) + '\n',
    );
    return ExitCode.OK;
  } finally {
    cluster.close();
  }
}

/**
 * A multi-cluster plan's status: each chosen cluster's record (every cluster, or the one
 * `--cluster` names), read through its own context, in the plan's order (a cluster not run yet
 * says so). Exit 2 only when none of them has a record.
 */
async function statusAcrossClusters(
  ctx: CommandContext,
  plan: Plan,
  planFile: string,
  watch: boolean,
  chosen: readonly ChosenCluster[],
): Promise<number> {
  const multi = plan.clusters!;
  const { io, common } = ctx;
  if (watch)
    throw new KwaveError(
      'USAGE',
      '--watch follows one rollout record: for a multi-cluster plan, run kwave status again (or watch each cluster with a one-cluster copy of the plan)',
    );
  const namespace = recordNamespace(plan);
  const out: string[] = [];
  let found = 0;
  for (const c of chosen) {
    const cluster = connectFor({ ...common, context: c.context }, io.env, plan);
    try {
      let cm: V1ConfigMap | undefined;
      try {
        cm = await readRecordConfigMap(cluster, plan);
      } catch (err) {
        if (err instanceof KwaveError)
          throw new KwaveError(err.code, `cluster ${c.name} (context ${c.context}): ${err.message}`, err.exitCode);
        throw err;
      }
      const now = new Date();
      if (!cm) {
        if (common.output === 'json')
          out.push(
            JSON.stringify({
              cluster: c.name,
              context: c.context,
              plan: plan.name,
              namespace,
              record: null,
              problem: 'not run yet',
            }),
          );
        else
          out.push(
            `== cluster ${c.name} (context ${c.context}) ==`,
            `not run yet in this cluster (no rollout record ${namespace}/${recordName(plan.name)})`,
            '',
          );
        continue;
      }
      found++;
      const record = recordOf(plan, cm, await decisionsOf(cluster, plan));
      const lock = await lockOf(cluster, plan, now);
      const input: StatusInput = { record, namespace, planFile, now, ...(lock ? { lock } : {}) };
      if (common.output === 'json')
        out.push(JSON.stringify({ cluster: c.name, context: c.context, ...statusJson(input) }));
      else out.push(`== cluster ${c.name} (context ${c.context}) ==`, renderStatus(input), '');
    } finally {
      cluster.close();
    }
  }
  if (common.output === 'text')
    out.push(`clusters in ${multi.order} order: ${multi.list.map((c) => c.name).join(', ')}`);
  io.stdout.write(out.join('\n') + '\n');
  if (found === 0) throw notRun(plan);
  return ExitCode.OK;
}

const CLEAR = '\x1b[H\x1b[2J';

/**
 * Follows the record until `signal` aborts. On a TTY (text) the screen is redrawn on each change
 * and every second (for countdowns and ages); otherwise each new state is printed once, text
 * states separated by a blank line, JSON one object per line. A record not there (yet) is said
 * once; the watch goes on.
 */
export async function watchStatus(
  ctx: CommandContext,
  cluster: Cluster,
  plan: Plan,
  planFile: string,
  signal: AbortSignal,
): Promise<number> {
  const namespace = recordNamespace(plan);
  const tty = ctx.common.output === 'text' && ctx.io.stdout.isTTY === true;
  let latest: { record: RolloutRecord; lock?: LeaseView } | undefined;
  let shown = 0;
  let problem: string | undefined;

  const draw = () => {
    const now = new Date();
    let text: string;
    if (latest) text = render(ctx, { ...latest, namespace, planFile, now });
    else if (ctx.common.output === 'json')
      text = JSON.stringify({ plan: plan.name, namespace, record: null, problem: problem ?? 'not run yet' });
    else
      text =
        problem ?? `plan ${plan.name} has not been run in namespace ${namespace} yet; waiting for its rollout record…`;
    if (tty) ctx.io.stdout.write(CLEAR + text + '\n');
    else ctx.io.stdout.write((shown > 0 && ctx.common.output === 'text' ? '\n' : '') + text + '\n');
    shown++;
  };

  // Changes arrive in order; each is rendered once the lease has been read for it.
  let chain = Promise.resolve();
  const onChange = (cm: V1ConfigMap | undefined) => {
    chain = chain.then(async () => {
      if (signal.aborted) return;
      if (!cm) {
        latest = undefined;
        problem = undefined;
      } else {
        const decoded = decodeRecord(cm);
        if (decoded.ok) {
          const lock = await lockOf(cluster, plan, new Date());
          const record = withDecisions(decoded.record, await decisionsOf(cluster, plan));
          latest = { record, ...(lock ? { lock } : {}) };
          problem = undefined;
        } else {
          latest = undefined;
          problem = `the rollout record ${namespace}/${recordName(plan.name)} is damaged: ${decoded.problem}`;
        }
      }
      draw();
    });
  };
  // On a TTY: redraw every second (countdowns, ages) and re-read the lease every fifth.
  let ticks = 0;
  const tick = () => {
    if (shown === 0) return;
    if (++ticks % 5 !== 0 || !latest) return draw();
    chain = chain.then(async () => {
      if (signal.aborted || !latest) return;
      const lock = await lockOf(cluster, plan, new Date());
      latest = { record: latest.record, ...(lock ? { lock } : {}) };
      draw();
    });
  };
  const ticker = tty ? setInterval(tick, 1000) : undefined;
  try {
    await watchConfigMap(cluster, namespace, recordName(plan.name), onChange, {
      signal,
      onError: (err) => ctx.io.stderr.write(`kwave: watching the rollout record: ${err.message} (retrying)\n`),
    });
    await chain;
  } finally {
    if (ticker) clearInterval(ticker);
  }
  return ExitCode.OK;
}
