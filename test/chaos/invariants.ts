// The invariants of a chaos scenario, from the cluster alone, on either backend: its final state
// (pods, the record ConfigMap, the Lease, the most pods not Ready at once; on real, kwave's
// accepted image patches per pod from the apiserver's audit log) and what its change feed saw
// during the run (state annotations, spec images, the Lease's holders, nodes that could not act).
// kwave's own output is never consulted; its exit code is compared with what the cluster says
// should have happened.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { decodeRecord } from '../../src/record/codec.js';
import { defaultDigest } from '../../src/sim/index.js';
import { nodeNameOf } from '../../src/sim/kubelet/pods.js';
import { containerStatus, gateOf, holderOf, specImage, type FinalState } from './cluster.js';
import type { DrainTracker } from './drains.js';
import { TARGET_BROKEN, type Scenario } from './scenario.js';

export interface Observed {
  /** Per pod at the start: its container's imageID and restartCount. */
  initial: Map<string, { imageID: string; restartCount: number }>;
  /** Per pod: every distinct value its state annotation had. */
  annotations: Map<string, Set<string>>;
  /** Per pod: the sequence of its spec image (consecutive repeats dropped). */
  specImages: Map<string, string[]>;
  /** Selected pods the change feed saw deleted, whoever deleted them (the harness, an eviction, the pod GC). */
  deleted: Set<string>;
  writes: number;
  holders: string[];
  /** Nodes unable to act now, and every node seen so during the scenario. */
  nodesDown: Set<string>;
  nodesThatCouldNotAct: Set<string>;
  /** The pods kwave drained (its gate closed on a Ready pod), counted change by change. */
  drains: DrainTracker;
  /** The exit codes of the runs, in order (null: SIGKILLed), for a livelock's message. */
  exits: (number | null)[];
  /** Pods evicted (the eviction accepted), containers crashed after their gate reopened (per pod), nodes deleted. */
  evicted: Set<string>;
  crashes: Map<string, number>;
  nodesDeleted: Set<string>;
  /** Pods whose spec image changed on a version that already carried a deletionTimestamp. */
  patchedWhileTerminating: string[];
  /** The pod whose first patch admission refuses (the scenario's admissionRefusal). */
  refusedPod?: string;
  /** Chaos the harness could not inflict, as messages. */
  problems: string[];
  chaosOver: boolean;
  /** Called once, when the first state annotation (kwave's first image patch) shows up. */
  onFirstPatch?: () => void;
  stop: () => void;
}

const OLD_IMAGE = 'nginx:1.14.2';

/**
 * `exitCode` is the code of the run that ended the plan (0 or 3), or null when none did before the
 * scenario's deadline: a livelock (runs ending 5, 4 or 2 for ever) or a hang, which fails the
 * scenario; the invariants that do not depend on how the plan ended are checked all the same.
 */
export function checkInvariants(s: Scenario, final: FinalState, seen: Observed, exitCode: number | null): string[] {
  const v: string[] = [];
  const broken = s.image === TARGET_BROKEN;
  // A refused image patch fails its pod (maxFailed 0): the run halts, unless the pod was deleted first.
  const refused = final.patchesRefused > 0;
  const expectedExit = broken || refused ? 3 : 0;
  // With a good image and `rollback: failed`, the pods upgraded before the halt stay upgraded.
  const upgradedMayStay = !broken && s.rollback === 'failed';
  if (exitCode === null)
    v.push(
      `no run ended the plan (exit 0 or 3) before the scenario's deadline: a livelock or a hang (runs exited ${seen.exits.map(String).join(', ') || 'never'})`,
    );
  else if (exitCode !== expectedExit)
    v.push(
      `exit code ${exitCode}, expected ${expectedExit} (${broken ? 'the target image fails' : refused ? `admission refused a patch of ${seen.refusedPod}` : 'the target image is good'})`,
    );

  const targetDigest = defaultDigest('docker.io/library/nginx:1.25.3');
  let atTarget = 0;
  for (const pod of final.pods) {
    const name = pod.metadata.name;
    const cs = containerStatus(pod);
    const initial = seen.initial.get(name);
    const spec = specImage(pod);
    if (!cs || !initial) {
      v.push(`${name}: no container status or unknown pod`);
      continue;
    }
    // 1. On the target by imageID, or back on the recorded one after a rollback.
    if (expectedExit === 0) {
      if (!cs.imageID.endsWith(`@${targetDigest}`) || spec !== s.image)
        v.push(`${name}: not on the target (spec ${spec}, imageID ${cs.imageID})`);
      else atTarget++;
    } else if (exitCode === 3) {
      const onTarget = cs.imageID.endsWith(`@${targetDigest}`) && spec === s.image;
      if (cs.imageID !== initial.imageID || spec !== OLD_IMAGE)
        if (!(upgradedMayStay && onTarget && name !== seen.refusedPod))
          v.push(
            `${name}: not back on its recorded image after the rollback (spec ${spec}, imageID ${cs.imageID}, was ${initial.imageID})`,
          );
    }
    // 2. One patch per direction: one upgrade and at most one rollback, and restarts to match.
    const states = [...(seen.annotations.get(name) ?? [])].map(
      (text) => JSON.parse(text) as { direction?: string; revision: string },
    );
    const upgrades = states.filter((st) => (st.direction ?? 'upgrade') === 'upgrade').length;
    const rollbacks = states.filter((st) => st.direction === 'rollback').length;
    if (upgrades > 1)
      v.push(
        `${name}: patched for the upgrade ${upgrades} times (state annotations ${[...(seen.annotations.get(name) ?? [])].join(' | ')})`,
      );
    if (rollbacks > 1) v.push(`${name}: patched for the rollback ${rollbacks} times`);
    // Not vacuous: every pod that ends on the target was patched once; every patched pod of a failed plan was rolled back.
    if (expectedExit === 0 && exitCode === 0 && upgrades !== 1)
      v.push(`${name}: on the target after ${upgrades} upgrade patches (expected exactly 1)`);
    if (exitCode === 3 && upgrades === 1 && rollbacks !== 1 && !(upgradedMayStay && rollbacks === 0))
      v.push(`${name}: patched for the failing image but rolled back ${rollbacks} times`);
    const images = seen.specImages.get(name) ?? [];
    if (images.length - 1 > upgrades + rollbacks)
      v.push(
        `${name}: spec image changed ${images.length - 1} times (${images.join(' → ')}) for ${upgrades} upgrade and ${rollbacks} rollback patches`,
      );
    // The audit log counts every accepted image patch, even one the change feed missed (a watch
    // resumed after a 410 sees only the newest state): at most one per direction.
    const patched = final.imagePatches?.get(name);
    if (final.imagePatches) {
      const allowed = broken ? 2 : 1;
      if ((patched ?? 0) > allowed)
        v.push(
          `${name}: the apiserver accepted ${patched} image patches from kwave (at most ${allowed}: one upgrade${broken ? ' and one rollback' : ''})`,
        );
      if (expectedExit === 0 && exitCode === 0 && (patched ?? 0) !== 1)
        v.push(`${name}: on the target after ${patched ?? 0} accepted image patches (audit log; expected exactly 1)`);
    }
    // Crashes after the gate reopened restart the container too, and only those: a crash never
    // makes kwave patch again (the pod was proven on the target; it stays upgraded). A restarted
    // kubelet starts its node's containers again (its runtime restarted with it).
    const rebooted = s.real?.kubeletRestart?.node === nodeNameOf(pod) ? 1 : 0;
    const restarts = cs.restartCount - initial.restartCount - rebooted;
    const crashes = seen.crashes.get(name) ?? 0;
    if (restarts > Math.max(upgrades + rollbacks, patched ?? 0) + crashes)
      v.push(
        `${name}: restarted ${restarts} times for ${upgrades} upgrade and ${rollbacks} rollback patches${crashes ? ` and ${crashes} crashes` : ''}`,
      );
    // Exact, but for the crash's restart when the end finds the container waiting for it (its
    // kubelet's back-off not yet over).
    const pending = crashes > 0 && !cs.state?.running ? 1 : 0;
    const expected = upgrades + crashes;
    if (crashes > 0 && exitCode === 0 && expectedExit === 0 && (restarts > expected || restarts < expected - pending))
      v.push(
        `${name}: crashed ${crashes} times after its gate reopened, ${upgrades} upgrade patches, yet restarted ${restarts} times`,
      );
    // 3. No pod left drained: every failed pod is rolled back here (rollback failed | all).
    if (gateOf(pod) === 'False') v.push(`${name}: left with its gate False`);
  }

  // 4. The budget. Exactly, in every scenario: the pods kwave drained at once (drains.ts).
  const { drains } = seen;
  if (drains.most > s.maxUnavailable)
    v.push(
      `kwave drained ${drains.most} pods at once (${drains.mostPods.join(', ')}), maxUnavailable is ${s.maxUnavailable}`,
    );
  // And every pod not Ready, where no node fault made pods unready behind kwave's back (on real,
  // an outage of the apiserver or etcd longer than the node grace period makes the node-lifecycle
  // controller mark nodes NotReady too: the change feed saw it; a restarted kubelet restarts its
  // node's containers). Crashes, evictions and a deleted node make pods unready behind kwave's
  // back as well.
  const most = final.maxNotReady;
  const othersMadeUnready =
    !!s.nodeFlap ||
    !!s.real?.kubeletRestart ||
    seen.nodesThatCouldNotAct.size > 0 ||
    seen.crashes.size > 0 ||
    seen.evicted.size > 0 ||
    seen.nodesDeleted.size > 0;
  if (!othersMadeUnready && most > s.maxUnavailable)
    v.push(`${most} selected pods were not Ready at once, maxUnavailable is ${s.maxUnavailable}`);
  // An image patch must never land on a pod being deleted (an eviction, the pod GC).
  for (const p of seen.patchedWhileTerminating) v.push(`kwave patched the image of a pod being deleted: ${p}`);

  // 5. The record agrees with the cluster.
  const cm = final.record as unknown as V1ConfigMap | undefined;
  const decoded = cm ? decodeRecord(cm) : undefined;
  if (!decoded?.ok)
    v.push(`the rollout record is ${cm ? `damaged: ${decoded && !decoded.ok ? decoded.problem : ''}` : 'missing'}`);
  else {
    const { phase, counts, rollback } = decoded.record;
    if (exitCode === 0) {
      if (phase !== 'Completed') v.push(`record phase ${phase} after exit 0`);
      const counted = counts.upgraded + counts.skipped;
      if (counts.failed !== 0 || counts.pending !== 0 || counts.in_progress !== 0)
        v.push(`record counts ${JSON.stringify(counts)} after exit 0`);
      if (counted < atTarget || counted > atTarget + seen.deleted.size)
        v.push(
          `record counts ${counted} pods upgraded or skipped, the cluster has ${atTarget} at the target (${seen.deleted.size} deleted)`,
        );
    } else if (exitCode === 3) {
      if (phase !== 'Halted' && phase !== 'RolledBack') v.push(`record phase ${phase} after exit 3`);
      if (counts.in_progress !== 0) v.push(`record counts ${counts.in_progress} pods in progress after the halt`);
      // Failures are kept across the runs of one revision (counts restart with each run, and a run
      // carrying on a killed run's halt may find every failed pod already rolled back).
      if (decoded.record.failuresTotal < 1)
        v.push(`record names no failed pod, yet the plan halted on ${refused ? 'a refused patch' : 'a failing image'}`);
      // A pod deleted before its rollback vanished: neither done nor failed. Only pods kwave had
      // patched can be rollback targets, so only their deletions excuse a missing one.
      const deletedPatched = [...seen.deleted].filter(
        (name) => [...(seen.annotations.get(name) ?? [])].length > 0,
      ).length;
      if (rollback && (rollback.failed !== 0 || rollback.done + deletedPatched < rollback.pods))
        v.push(
          `record rollback ${JSON.stringify(rollback)}: not every pod came back (${deletedPatched} patched pods deleted)`,
        );
    }
  }
  // 6. The Lease ends released.
  const holder = holderOf(final.lease);
  if (holder) v.push(`the lease is still held by "${holder}" after the last run ended`);
  return v;
}
