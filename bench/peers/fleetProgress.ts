// What the peer benchmark sees of one fleet's upgrade, from the pods alone (whatever tool does
// it): fed every version of every pod the bench's watch receives, with the time it arrived
// (performance.now()), it says when the upgrade is done, its wall time, each pod's drain (not
// Ready seen → image patch seen) and the other phases of its turn, the most pods not Ready at
// once, the pods that were Ready again in the middle of their drain, and whether it was in place.
// Pure: no I/O, no clock.

export interface PodVersion {
  metadata: { name: string; uid: string };
  spec: { containers: { name: string; image: string }[] };
  status?: {
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; imageID?: string; restartCount?: number; ready?: boolean }[];
  };
}

interface Initial {
  uid: string;
  restartCount: number;
  imageID: string | undefined;
}

interface Seen {
  uid: string;
  restartCount: number;
  imageID: string | undefined;
  image: string | undefined;
  ready: boolean;
  /** First time seen with a readiness gate's condition False since the change (the tool's first write to it). */
  closedAt?: number;
  /** First time seen not Ready since the change. */
  notReadyAt?: number;
  /** First time seen with the target image in its spec. */
  patchedAt?: number;
  /** Seen Ready again after its gate closed and it was not Ready, before its image patch. */
  readyMidDrain?: boolean;
  /** Seen not Ready after it was Ready on the target imageID (out of service again after it counted). */
  readyLostAfterDone?: boolean;
  /** First time seen with the container ready on the target imageID (the kubelet's part done). */
  runningAt?: number;
  /** When it last became Ready on the target imageID (undefined while it is not). */
  doneAt?: number;
  /** Was Ready on the target imageID at some time. */
  everDone?: boolean;
}

/** The conditions Kubernetes itself keeps on a pod; any other is a readiness gate's. */
const POD_CONDITIONS = new Set([
  'Ready',
  'ContainersReady',
  'Initialized',
  'PodScheduled',
  'PodReadyToStartContainers',
]);

export interface FleetSummary {
  /** The change to the last pod Ready on the target imageID. */
  wallMs: number;
  /** Every pod kept its uid, restarted once, and runs the target imageID; no pod came or went. */
  inPlace: boolean;
  /** Why not in place (the first few). */
  problems: string[];
  /** Per pod that was seen not Ready before its image patch: ms between the two, sorted. */
  drainsMs: number[];
  /**
   * The pods seen Ready again in the middle of their drain (gate closed, seen not Ready, Ready
   * again before the image patch): back in service for a moment, as when a kubelet writes back
   * a Ready True it still had cached.
   */
  readyMidDrain: number;
  /**
   * The pods seen not Ready again after they were Ready on the target imageID, while the upgrade
   * ran: out of service again after they counted, as when a kubelet writes back a `Ready` False it
   * computed before the gate reopened over a `Ready` True the tool wrote.
   */
  readyLostAfterDone: number;
  /**
   * The most pods not Ready at once in the watch's order, which is the order the API server
   * stored the versions in: each count is of one state the fleet really was in.
   */
  maxNotReady: number;
  /**
   * The same for the tool's pods alone: not Ready with a readiness gate closed, or patched to
   * the target and not yet once Ready on it. The rest were made not Ready by something else
   * (the node lifecycle controller marks every pod of a node whose heartbeat is late not Ready).
   */
  maxNotReadyByTool: number;
  phases: Phases;
}

/**
 * Where a pod's turn goes, from the watch: per pod, sorted, in ms — gate closed → not Ready (the
 * kubelet), not Ready → patched (the drain), patched → container ready on the target (the
 * kubelet's restart), container ready → pod Ready (the tool reopens its gate, the kubelet sees
 * it). Of pods seen through every step.
 */
export interface Phases {
  /** The change to the first pod seen with its gate closed: the tool's start-up and first write. */
  firstCloseMs: number;
  closeToNotReadyMs: number[];
  patchToRunningMs: number[];
  runningToReadyMs: number[];
  /** Σ per pod (gate closed → done) in ms: divided by M × (wall − firstCloseMs), how full the window of M was. */
  busyMs: number;
}

const byNumber = (a: number, b: number) => a - b;

export class FleetProgress {
  private readonly initial = new Map<string, Initial>();
  private readonly pods = new Map<string, Seen>();
  private atTarget = 0;
  /** The pods not Ready now: true for the tool's (see FleetSummary.maxNotReadyByTool). */
  private readonly notReady = new Map<string, boolean>();
  private byTool = 0;
  private maxNotReady = 0;
  private maxNotReadyByTool = 0;

  constructor(
    before: readonly PodVersion[],
    private readonly opts: {
      container: string;
      toImage: string;
      /** `sha256:…`: a pod is at the target when its container's imageID ends with `@` + this. */
      toDigest: string;
      /** When the change was made (same clock as `observe`'s times). */
      startedAt: number;
    },
  ) {
    for (const pod of before) {
      const c = this.status(pod);
      this.initial.set(pod.metadata.name, {
        uid: pod.metadata.uid,
        restartCount: c?.restartCount ?? 0,
        imageID: c?.imageID,
      });
      this.observe(pod, opts.startedAt);
    }
  }

  private status(pod: PodVersion) {
    return pod.status?.containerStatuses?.find((c) => c.name === this.opts.container);
  }

  private isTarget(imageID: string | undefined): boolean {
    return imageID !== undefined && imageID.endsWith(`@${this.opts.toDigest}`);
  }

  /** A version of a pod (ADDED or MODIFIED), seen at `at`. */
  observe(pod: PodVersion, at: number): void {
    const name = pod.metadata.name;
    const c = this.status(pod);
    const ready = pod.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
    const image = pod.spec.containers.find((x) => x.name === this.opts.container)?.image;
    const prev = this.pods.get(name);
    const seen: Seen = {
      ...prev,
      uid: pod.metadata.uid,
      restartCount: c?.restartCount ?? 0,
      imageID: c?.imageID,
      image,
      ready,
    };
    if (prev && prev.uid !== pod.metadata.uid) {
      // Replaced by a new pod of the same name: its times start again.
      delete seen.closedAt;
      delete seen.notReadyAt;
      delete seen.patchedAt;
      delete seen.runningAt;
      delete seen.doneAt;
      delete seen.everDone;
      delete seen.readyMidDrain;
      delete seen.readyLostAfterDone;
    }
    const gateClosed = (pod.status?.conditions ?? []).some((x) => !POD_CONDITIONS.has(x.type) && x.status === 'False');
    const afterChange = at > this.opts.startedAt;
    if (gateClosed && seen.closedAt === undefined && afterChange) seen.closedAt = at;
    if (!ready && seen.notReadyAt === undefined && afterChange) seen.notReadyAt = at;
    if (image === this.opts.toImage && seen.patchedAt === undefined) seen.patchedAt = at;
    if (ready && gateClosed && seen.notReadyAt !== undefined && seen.patchedAt === undefined) seen.readyMidDrain = true;
    if (c?.ready === true && this.isTarget(seen.imageID) && seen.runningAt === undefined) seen.runningAt = at;
    const wasDone = prev?.doneAt !== undefined && prev.uid === seen.uid;
    const done = ready && this.isTarget(seen.imageID);
    if (done && !wasDone) seen.doneAt = at;
    if (done) seen.everDone = true;
    if (!done) delete seen.doneAt;
    if (wasDone && !ready) seen.readyLostAfterDone = true;
    this.atTarget += Number(done) - Number(wasDone);
    this.pods.set(name, seen);
    this.setNotReady(name, ready ? undefined : gateClosed || (seen.patchedAt !== undefined && !seen.everDone));
  }

  /** `byTool` undefined: Ready (or gone). */
  private setNotReady(name: string, byTool: boolean | undefined): void {
    this.byTool -= Number(this.notReady.get(name) === true);
    if (byTool === undefined) this.notReady.delete(name);
    else this.notReady.set(name, byTool);
    this.byTool += Number(byTool === true);
    this.maxNotReady = Math.max(this.maxNotReady, this.notReady.size);
    this.maxNotReadyByTool = Math.max(this.maxNotReadyByTool, this.byTool);
  }

  /** A pod deleted. */
  remove(name: string): void {
    const prev = this.pods.get(name);
    if (prev?.doneAt !== undefined) this.atTarget--;
    this.pods.delete(name);
    this.setNotReady(name, undefined);
  }

  /** `count` pods, every one Ready on the target imageID. */
  done(count: number): boolean {
    return this.pods.size === count && this.atTarget === count;
  }

  summary(): FleetSummary {
    const problems: string[] = [];
    let last = this.opts.startedAt;
    const drainsMs: number[] = [];
    let readyMidDrain = 0;
    let readyLostAfterDone = 0;
    const phases: Phases = {
      firstCloseMs: NaN,
      closeToNotReadyMs: [],
      patchToRunningMs: [],
      runningToReadyMs: [],
      busyMs: 0,
    };
    for (const [name, p] of this.pods) {
      if (p.doneAt !== undefined) last = Math.max(last, p.doneAt);
      if (p.notReadyAt !== undefined && p.patchedAt !== undefined && p.notReadyAt <= p.patchedAt)
        drainsMs.push(p.patchedAt - p.notReadyAt);
      if (p.readyMidDrain) readyMidDrain++;
      if (p.readyLostAfterDone) readyLostAfterDone++;
      this.addPhases(phases, p);
      const before = this.initial.get(name);
      if (!before) problems.push(`${name}: a new pod`);
      else if (before.uid !== p.uid) problems.push(`${name}: recreated (new uid)`);
      else if (p.restartCount !== before.restartCount + 1)
        problems.push(`${name}: restartCount ${before.restartCount} → ${p.restartCount}`);
      if (!this.isTarget(p.imageID)) problems.push(`${name}: imageID ${p.imageID ?? 'none'}`);
    }
    for (const name of this.initial.keys()) if (!this.pods.has(name)) problems.push(`${name}: gone`);
    return {
      wallMs: last - this.opts.startedAt,
      inPlace: problems.length === 0,
      problems: problems.slice(0, 5),
      drainsMs: drainsMs.sort((a, b) => a - b),
      readyMidDrain,
      readyLostAfterDone,
      maxNotReady: this.maxNotReady,
      maxNotReadyByTool: this.maxNotReadyByTool,
      phases: {
        ...phases,
        firstCloseMs: phases.firstCloseMs - this.opts.startedAt,
        closeToNotReadyMs: phases.closeToNotReadyMs.sort(byNumber),
        patchToRunningMs: phases.patchToRunningMs.sort(byNumber),
        runningToReadyMs: phases.runningToReadyMs.sort(byNumber),
      },
    };
  }

  /** A pod's share of `phases` (firstCloseMs as a time, not yet from the change). */
  private addPhases(phases: Phases, p: Seen): void {
    const { closedAt, notReadyAt, patchedAt, runningAt, doneAt } = p;
    if (closedAt === undefined || notReadyAt === undefined || patchedAt === undefined) return;
    if (runningAt === undefined || doneAt === undefined) return;
    if (!(closedAt <= notReadyAt && notReadyAt <= patchedAt && patchedAt <= runningAt && runningAt <= doneAt)) return;
    phases.firstCloseMs = Number.isNaN(phases.firstCloseMs) ? closedAt : Math.min(phases.firstCloseMs, closedAt);
    phases.closeToNotReadyMs.push(notReadyAt - closedAt);
    phases.patchToRunningMs.push(runningAt - patchedAt);
    phases.runningToReadyMs.push(doneAt - runningAt);
    phases.busyMs += doneAt - closedAt;
  }
}
