// One cluster's part of a run, step 2 (after openCluster.ts): the rollout record loaded and
// started, pause/resume/abort followed (control.ts), the events fanned out to the record, the
// metrics and the caller's sinks, and the runner's deps assembled. Writes begin here.
import type { V1Pod } from '@kubernetes/client-node';
import { gateChecker } from '../gates/index.js';
import { ownedBy } from '../inplace/state.js';
import { metricsSink } from '../metrics/fromEvents.js';
import { controlName, startRecord, type RolloutRecord } from '../record/record.js';
import { standingHalt, type StandingHalt } from '../record/standingHalt.js';
import { RecordStore } from '../record/store.js';
import type { EventSink, RolloutEvent } from '../rollout/events.js';
import { gateAppliesAfterWave } from '../rollout/gateCheck.js';
import type { RunnerDeps } from '../rollout/runner.js';
import { realSleep } from '../sleep.js';
import { followControl } from './control.js';
import { holderPodWriter, holderRecordApi } from './holderWrites.js';
import { wrapKube } from '../cluster/index.js';
import type { ClusterOpenOptions, OpenCluster } from './openCluster.js';

export interface ReadyCluster extends OpenCluster {
  records: RecordStore;
  deps: RunnerDeps;
}

/** Step 2: the rollout record loaded and started, the sink wired, the runner's deps assembled. */
export async function startClusterRecord(
  o: ClusterOpenOptions,
  open: OpenCluster,
  sinks: readonly EventSink[],
  push: () => Promise<void>,
): Promise<ReadyCluster> {
  const { io } = o;
  const { plan } = o;
  const { cluster, lock, where } = open;
  const namespace = plan.target.namespaces[0]!;
  const say = (line: string) =>
    io.stderr.write(`kwave: ${open.target.name === undefined ? '' : `${open.target.name}: `}${line}\n`);
  const records = new RecordStore(holderRecordApi(cluster, lock), {
    namespace,
    controlNamespace: plan.controlNamespace,
    plan: plan.name,
    onError: (err) => say(`saving the rollout record failed (will retry): ${err.message}`),
    onTrim: (note) => say(note === '' ? `the rollout record kwave-${plan.name} fits whole again` : note),
  });
  // Steps run in reverse: the last record state is written before the lease is released.
  // Once the lease is lost the record belongs to the new holder: write nothing more.
  o.closers.push(async () => {
    if (!lock.lost) await records.flush().catch(() => undefined);
    records.close();
  });
  const previous = await wrapKube(() => records.load(), `reading the rollout record kwave-${plan.name}${where}`);
  const prior: RolloutRecord | undefined = previous?.ok ? previous.record : undefined;
  if (previous && !previous.ok)
    say(`the rollout record kwave-${plan.name} is damaged (${previous.problem}); starting a new one`);
  const record = startRecord(prior, {
    plan: plan.name,
    revision: plan.revision,
    planText: plan.source.text,
    holder: o.identity,
    now: new Date().toISOString(),
    direction: o.direction,
  });
  await wrapKube(() => records.save(record, { flush: true }), `writing the rollout record kwave-${plan.name}${where}`);

  const decisions = `${plan.controlNamespace}/${controlName(plan.name)}`;
  if (prior && legacyDecisions(prior))
    say(
      `the rollout record holds approvals or pause/abort requests written by an earlier kwave (${legacyDecisions(prior)}); they no longer count and leave the record: people's decisions are read from ${decisions} only (give them again with kwave approve, pause, resume or abort)`,
    );
  // kwave pause / resume / abort, from anywhere: followed on the decisions ConfigMap by watch.
  const control = followControl(cluster, {
    namespace: plan.controlNamespace,
    plan: plan.name,
    revision: plan.revision,
    identity: o.identity,
    onError: (err) => say(`watching ${decisions} for pause/abort: ${err.message} (retrying)`),
    onProblem: (problem) => say(`the pause/abort requests in ${decisions} are damaged (${problem}); ignoring them`),
  });
  o.closers.push(() => control.close());
  // Start knowing whether a pause stands; a record that cannot be read in time is followed on.
  await Promise.race([control.ready, new Promise((resolve) => setTimeout(resolve, CONTROL_READY_MS).unref())]);

  const label = open.target.name;
  const feed = fanOut(
    ...sinks,
    metricsSink(
      o.metrics,
      plan.gates.map((g) => g.name),
      new Set(plan.gates.filter((g) => g.prometheus?.dryRun).map((g) => g.name)),
    ),
    (e) => {
      if (!lock.lost) records.feed(e);
      if (e.event === 'wave-end' || e.event === 'rollout-end') void push();
    },
  );
  // A multi-cluster plan's events say which cluster they come from.
  const sink: EventSink = label === undefined ? feed : (e) => feed({ ...e, cluster: label });
  const stop = o.stop.signal;
  const deps: RunnerDeps = {
    writer: holderPodWriter(cluster, lock),
    view: open.cache,
    ...(open.nodes ? { nodes: open.nodes } : {}),
    ...(open.budgets ? { disruptionBudgets: open.budgets.view } : {}),
    ...(open.pullers ? { prePull: (wave: number, pods: readonly V1Pod[]) => open.pullers!.pull(wave, pods) } : {}),
    zones: open.zones,
    sink,
    sleep: realSleep,
    stop,
    abort: open.abort,
    checkGate: gateChecker({
      plan: plan.name,
      revision: plan.revision,
      metrics: o.metrics,
      sleep: realSleep,
      pauseTickMs: 5000,
    }),
    approvals: {
      isApproved: async (wave) => (await records.isApproved(wave)) !== undefined,
      waitForApproval: async (wave, signal) => {
        await records.waitForApproval(wave, signal ?? stop);
      },
    },
    // Only results of this revision count, and only for the gates due after that wave.
    gatesPassed: (wave) =>
      prior !== undefined &&
      ownedBy(prior, plan.name, plan.revision) &&
      plan.gates
        .filter((g) => gateAppliesAfterWave(g, wave, prior.waves))
        .every((g) => prior.gates.some((r) => r.wave === wave && r.gate === g.name && r.result === 'passed')),
    onUnavailable: (unavailable, budget) => o.metrics.setUnavailable(unavailable, budget),
    control,
    // The halt reaches the record before the first rollback patch, or a run killed (or a lease
    // lost) mid-rollback would be resumed as an upgrade and patch its pods again. Each attempt is
    // the requester's (retried for up to a minute); a lease in doubt holds it until confirmed.
    persistHalt: async () => {
      for (let attempt = 1; ; attempt++) {
        if (lock.lost) return;
        try {
          return await records.flush();
        } catch (err) {
          if (lock.lost) return;
          const last = attempt === PERSIST_HALT_ATTEMPTS;
          say(
            `writing the halt to the rollout record failed${last ? ' (a run killed now would upgrade again what it rolls back)' : ', trying again'}: ${err instanceof Error ? err.message : String(err)}`,
          );
          if (last) return;
        }
      }
    },
  };
  const standing =
    o.direction === 'upgrade'
      ? standingHalt(prior, plan, { retry: o.retry, abandonedBy: lock.abandonedBy })
      : undefined;
  if (standing) {
    deps.resumeHalt = standing.halt;
    say(standingHaltLine(standing));
  }
  if (open.forced) deps.force = open.forced;
  return { ...open, records, deps };
}

function standingHaltLine({ how, halt }: StandingHalt): string {
  if (how === 'ended')
    return `this revision halted in an earlier run (${halt.message}) and stays halted: no pod is upgraded; run it with --retry to upgrade its failed pods again, or change the plan`;
  const what = how === 'unfinished' ? 'halted and did not finish' : 'halted and died before it let go of the plan';
  return `an earlier run of this revision ${what} (${halt.message}); carrying that halt on: no pod is upgraded, its rollback is finished`;
}

/**
 * The decisions a record of an earlier kwave holds in its own keys (`approval.wave-N`,
 * `control.json`): read, never acted on. Undefined when there are none.
 */
function legacyDecisions(record: RolloutRecord): string | undefined {
  const keys = [
    ...Object.keys(record.approvals).map((wave) => `approval of wave ${wave}`),
    ...(record.control?.paused ? ['a pause'] : []),
    ...(record.control?.abort ? ['an abort'] : []),
  ];
  return keys.length > 0 ? keys.join(', ') : undefined;
}

/** How long a run waits to learn whether a pause stands before it starts anyway. */
const CONTROL_READY_MS = 30_000;
/** Tries at writing a halt to the record before its rollback goes ahead without it. */
const PERSIST_HALT_ATTEMPTS = 3;

function fanOut(...sinks: EventSink[]): EventSink {
  return (event: RolloutEvent) => {
    for (const s of sinks) s(event);
  };
}
