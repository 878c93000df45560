// Pods whose node cannot act (its kubelet silent, or the node gone): a flow in flight there is
// stopped where it stands, and it, like a pod about to start, waits apart until the node is back
// ("parked", holding no concurrency slot); a pod still waiting when the run ends is left for the
// next run with the reason (`leftForNodes`). Also what a first stop signal reports: the pods in
// flight the run still waits for, and those it leaves resumable at once because their node
// cannot act. A node NotReady for less than `strategy.nodeGraceSeconds` may be flapping (a late
// heartbeat, a control-plane restart): the run does not give up on it before that (nodeGrace.ts).
import type { V1Pod } from '@kubernetes/client-node';
import type { PodOutcome } from '../inplace/executor.js';
import { podKey } from '../inplace/podView.js';
import type { Direction } from '../inplace/state.js';
import type { NodeWait } from './events.js';
import { NodeGrace } from './nodeGrace.js';
import { nodeHealth, nodeLostMessage, nodeWaitMessage, type NodeDown } from './nodeHealth.js';
import type { RunState } from './runState.js';
import type { SelectedPod } from './select.js';
import { SlotLimit, type GAVE_WAY } from './slotLimit.js';

/**
 * A parked pod's start once its node is back, in a slot of the parked pods' limiter (`queued`:
 * the pods queued for one): its node's state if the node stopped acting again, `gave-way`
 * (SlotLimit), else undefined once it has ended.
 */
export type ParkedStart = (queued: ReadonlySet<string>) => Promise<NodeDown | typeof GAVE_WAY | undefined>;

/** A pod in flight: its node, the step it is at, and the switch that ends its flow when the node stops acting (or the run is aborted). */
interface Flow {
  node: string | undefined;
  step: string;
  nodeLost: AbortController;
}

export class NodeWaits {
  /** Pods the run leaves to the next one because their node could not act. */
  readonly leftForNodes = new Map<string, NodeWait>();
  /** Pods waiting for their node to act again, each with the promise of its wait (and its flow, once the node is back). */
  private readonly parked = new Map<string, Promise<void>>();
  /** Set when everything else is done: pods still waiting for their node stop waiting. */
  private ending = false;
  private readonly flows = new Map<string, Flow>();
  /** Pods whose flow their node stopped, waiting apart for it or resumed (awaitNode), with the wait's token. */
  private readonly midFlow = new Map<string, symbol>();
  private readonly parkedLimit: SlotLimit;
  private readonly grace: NodeGrace;

  constructor(private readonly run: RunState) {
    this.parkedLimit = new SlotLimit(run.plan.strategy.concurrency, () => run.budget.wake());
    this.grace = new NodeGrace(run);
    // One listener for every flow, rather than an AbortSignal.any of two signals per pod.
    run.deps.abort?.addEventListener(
      'abort',
      () => {
        for (const f of this.flows.values()) f.nodeLost.abort();
      },
      { once: true },
    );
  }

  nodeOf(p: SelectedPod): string | undefined {
    return this.run.deps.view.get(p.namespace, p.name)?.spec?.nodeName ?? p.node;
  }

  /**
   * The pod's node and why it cannot act; undefined when it can (or kwave has no news of it), and
   * for a pod that is gone — deleted, replaced, or being deleted (an eviction; the pod GC of a
   * deleted node): it waits for no node, and its flow, run or resumed, ends it as vanished.
   */
  nodeDown(p: SelectedPod): NodeDown | undefined {
    return this.gone(p) ? undefined : this.nodeDownAt(this.nodeOf(p));
  }

  private nodeDownAt(node: string | undefined): NodeDown | undefined {
    const nodes = this.run.deps.nodes;
    if (!node || !nodes) return undefined;
    const health = nodeHealth(nodes.get(node));
    return health.canAct ? undefined : { node, health };
  }

  /** The run is over: no grace wake-up is left pending. */
  close(): void {
    this.grace.close();
  }

  private gone(p: SelectedPod): boolean {
    const pod = this.run.deps.view.get(p.namespace, p.name);
    return !pod || (p.uid !== '' && pod.metadata?.uid !== p.uid) || Boolean(pod.metadata?.deletionTimestamp);
  }

  /** The pod `namespace/name` as the pod cache shows it. */
  private cached(key: string): V1Pod | undefined {
    const [namespace, name] = key.split('/') as [string, string];
    return this.run.deps.view.get(namespace, name);
  }

  /** nodeDown of the pod `namespace/name`, as the pod cache shows it. */
  private nodeDownOf(key: string): NodeDown | undefined {
    const pod = this.cached(key);
    return pod && !pod.metadata?.deletionTimestamp ? this.nodeDownAt(pod.spec?.nodeName) : undefined;
  }

  /**
   * Why the node of the budget holder `namespace/name` cannot act: a holder being deleted too,
   * which on such a node stays out of service until the node is back (its kubelet ends it).
   */
  private holderNodeDown(key: string): NodeDown | undefined {
    return this.nodeDownAt(this.cached(key)?.spec?.nodeName);
  }

  // ---- flows in flight -----------------------------------------------------------------------

  /** Counts `p`'s flow in flight; the signal aborts when its node stops acting (or a stop finds it down), or the run is aborted. */
  flowStarted(key: string, p: SelectedPod): AbortController {
    const nodeLost = new AbortController();
    if (this.run.deps.abort?.aborted) nodeLost.abort();
    this.flows.set(key, { node: this.nodeOf(p), step: 'started', nodeLost });
    return nodeLost;
  }

  flowAt(key: string, step: string): void {
    const flow = this.flows.get(key);
    if (flow) flow.step = step;
  }

  flowEnded(key: string): void {
    this.flows.delete(key);
  }

  /** A node changed: pods in flight there stop where they stand if it can no longer act; waiters look again. */
  onNodeChange(name: string): void {
    if (!nodeHealth(this.run.deps.nodes?.get(name)).canAct)
      for (const f of this.flows.values()) if (f.node === name) f.nodeLost.abort();
    this.run.budget?.wake();
  }

  /**
   * First stop signal: say what the run still waits for, and leave pods whose node cannot act
   * resumable at once rather than after their podTimeout.
   */
  onStop(): void {
    const waitingFor: string[] = [];
    const leaving: string[] = [];
    for (const [key, f] of this.flows) {
      const health = f.node ? nodeHealth(this.run.deps.nodes?.get(f.node)) : undefined;
      if (f.node && health && !health.canAct) {
        f.nodeLost.abort();
        leaving.push(`${key} (${nodeWaitMessage(f.node, health, this.run.now())})`);
      } else waitingFor.push(`${key} (${f.step})`);
    }
    for (const key of this.parked.keys()) {
      if (this.flows.has(key)) continue;
      const down = this.nodeDownOf(key);
      leaving.push(down ? `${key} (${nodeWaitMessage(down.node, down.health, this.run.now())})` : key);
    }
    if (waitingFor.length > 0 || leaving.length > 0) {
      const parts = [
        waitingFor.length > 0
          ? `waiting for ${waitingFor.length} pod${waitingFor.length === 1 ? '' : 's'} in flight to finish: ${waitingFor.join(', ')}`
          : 'no pod in flight to wait for',
        ...(leaving.length > 0 ? [`not waiting for ${leaving.join(', ')}: left resumable, their node cannot act`] : []),
      ];
      this.run.emit({ event: 'interrupt', message: parts.join('; ') });
    }
    this.run.budget?.wake();
  }

  // ---- pods waiting for their node -----------------------------------------------------------

  /** What a pod waiting for `down` is shown with, and listed with if the run leaves it. */
  private nodeWaitOf(key: string, down: NodeDown, direction: Direction): NodeWait {
    const since = down.health.sinceMs === undefined ? undefined : new Date(down.health.sinceMs).toISOString();
    const message = nodeWaitMessage(down.node, down.health, this.run.now());
    return {
      pod: key,
      node: down.node,
      ...(since ? { since } : {}),
      message: direction === 'rollback' ? `rollback pending: ${message}` : message,
    };
  }

  /**
   * Leaves `p` out until its node can act again, then runs it (`runPod`, outside the wave's
   * concurrency limiter, so waiting pods hold no slot of it). A rollback is not attempted while
   * the node is down (it would time out the same way): it is left pending for the next run.
   */
  park(p: SelectedPod, wave: number, direction: Direction, down: NodeDown, runPod: ParkedStart): void {
    const key = podKey(p);
    const wait = this.nodeWaitOf(key, down, direction);
    this.run.emit({
      event: 'pod-waiting',
      wave,
      pod: key,
      node: wait.node,
      ...(wait.since ? { since: wait.since } : {}),
      direction,
      message: wait.message,
    });
    if (direction === 'rollback' || this.parked.has(key)) {
      this.leftForNodes.set(key, wait);
      this.run.budget.wake(); // see below
      return;
    }
    this.waitApart(key, async () => {
      if (!(await this.nodeBack(p, false))) {
        const still = this.nodeDown(p);
        this.leftForNodes.set(key, still ? this.nodeWaitOf(key, still, direction) : wait);
        return;
      }
      const again = await this.parkedLimit.run(key, runPod);
      if (again) {
        this.parked.delete(key);
        this.park(p, wave, direction, again, runPod);
      }
    });
  }

  /**
   * A flow its node stopped (the pod drained, maybe patched) waits apart for the node, holding no
   * slot of the wave's concurrency limiter, then `resume`s at once. Not under the waiting pods'
   * limiter: a parked pod holds its slot while it waits for the budget, which this drained pod may
   * be the one to hold (a deadlock), and such flows are few — each holds the budget while it waits.
   * `leave` instead when the run stops, or when everything else is done and the node still
   * cannot act: the run does not wait for ever for a node that may never come back.
   */
  awaitNode(p: SelectedPod, resume: () => Promise<void>, leave: () => void): void {
    const key = podKey(p);
    // Counted mid-flow until its flow has ended (resumed) or it is left; a flow stopped again is counted anew.
    const token = Symbol(key);
    this.midFlow.set(key, token);
    const ended = () => {
      if (this.midFlow.get(key) === token) this.midFlow.delete(key);
    };
    this.waitApart(key, async () => {
      // A drained pod whose node is back as the run ends is finished, not left.
      if (await this.nodeBack(p, true)) {
        await resume();
        ended();
      } else {
        ended();
        leave();
      }
    });
  }

  /** Flows stopped by their node, waiting apart for it to act again or resumed (awaitNode); `backOnly`: those whose node can act. */
  midFlowCount(backOnly: boolean): number {
    if (!backOnly) return this.midFlow.size;
    let n = 0;
    for (const key of this.midFlow.keys()) if (!this.nodeDownOf(key)) n++;
    return n;
  }

  /** Counts `key` as waiting apart for its node while `wait` runs (settle() awaits it). */
  private waitApart(key: string, wait: () => Promise<void>): void {
    const waiting: Promise<void> = wait().finally(() => {
      // Done waiting (run, or left): no longer parked, unless parked again meanwhile.
      if (this.parked.get(key) === waiting) this.parked.delete(key);
      this.run.budget.wake(); // a wave waiting for it looks again
    });
    this.parked.set(key, waiting);
    // Pods waiting for the budget look again: a parked holder may leave them nothing to wait for.
    this.run.budget.wake();
  }

  /**
   * Until `p`'s node can act again (true), or the run stops or everything else is done first
   * (false); `backAtEnd`: a node back when everything else is done still counts.
   */
  private async nodeBack(p: SelectedPod, backAtEnd: boolean): Promise<boolean> {
    // Once everything else is done, a node within its grace is still waited for, and counts if back.
    let waitedInGrace = false;
    for (;;) {
      if (this.run.stopping) return false;
      const down = this.nodeDown(p);
      if (!down) return !this.ending || backAtEnd || waitedInGrace;
      if (this.ending) {
        if (!this.grace.inGrace(down)) return false;
        waitedInGrace = true;
      }
      await this.run.budget.nextChange();
    }
  }

  /**
   * `p` cannot start and nothing in this run will free the budget (`heldForGood`: each of
   * `holders` waits for its node or failed): a pod left drained stays so until the next run, and a
   * parked one until its node is back, which may be never. So `p` is left for the next run too,
   * waiting for the first holder's node. False (nothing done) when no holder waits for a node.
   */
  leaveBehindBudgetHolders(
    p: SelectedPod,
    wave: number,
    direction: Direction,
    budget: number,
    holders: readonly string[],
  ): boolean {
    const held = holders.map((k) => this.waitingForNode(k)).find((w) => w !== undefined);
    if (!held) return false;
    const key = podKey(p);
    const why = held.message.replace(/^rollback pending: /, '');
    const message = `${direction === 'rollback' ? 'rollback pending: ' : ''}the unavailability budget of ${budget} is held by ${held.pod}, left for its node: ${why}`;
    const wait: NodeWait = { pod: key, node: held.node, ...(held.since ? { since: held.since } : {}), message };
    this.leftForNodes.set(key, wait);
    this.run.emit({
      event: 'pod-waiting',
      wave,
      pod: key,
      node: wait.node,
      ...(wait.since ? { since: wait.since } : {}),
      direction,
      message,
    });
    return true;
  }

  /**
   * Whether the pod `key` waits for its node for good in this run: left for the next run, or its
   * node cannot act and is past its grace (within it, the node may yet come back).
   */
  waitsForNodeForGood(key: string): boolean {
    if (this.leftForNodes.has(key)) return true;
    const down = this.holderNodeDown(key);
    return down !== undefined && !this.grace.inGrace(down);
  }

  /**
   * How the pod `key` waits for its node: left for the next run, parked, or not taken yet while
   * its node cannot act (the node lifecycle controller marks such pods not Ready, so they hold
   * the budget until the node is back, which may be never).
   */
  private waitingForNode(key: string): NodeWait | undefined {
    const left = this.leftForNodes.get(key);
    if (left) return left;
    const down = this.holderNodeDown(key);
    return down ? this.nodeWaitOf(key, down, 'upgrade') : undefined;
  }

  /** Pods of the run that wait for their node: parked, or left for the next run. */
  get waitingCount(): number {
    let n = this.leftForNodes.size;
    for (const key of this.parked.keys()) if (!this.leftForNodes.has(key)) n++;
    return n;
  }

  /**
   * Parked pods whose node can act again: about to go on (in flight), so a wave waits for them.
   * `orInGrace`: also those whose node is down within its grace, which a wave left short waits for.
   */
  resumingCount(orInGrace: boolean): number {
    if (this.ending || this.run.stopping) return 0;
    let n = 0;
    for (const key of this.parked.keys()) {
      if (this.leftForNodes.has(key)) continue;
      const down = this.nodeDownOf(key);
      if (!down || (orInGrace && this.grace.inGrace(down))) n++;
    }
    return n;
  }

  /** Everything else is done: pods still waiting for their node stop waiting (their flows, if running, finish). */
  async settle(): Promise<void> {
    this.ending = true;
    this.run.budget.wake();
    while (this.parked.size > 0) {
      const all = [...this.parked.values()];
      await Promise.all(all);
      for (const [k, v] of this.parked) if (all.includes(v)) this.parked.delete(k);
    }
  }

  /**
   * A flow ended because its node stopped acting (`lost`), or timed out while the node could not
   * act: not the image's failure but `NodeNotReady`, saying since when. The pod stays as it
   * stands (drained, maybe patched) for the next run, which resumes it from its state.
   */
  nodeLostOutcome(p: SelectedPod, outcome: PodOutcome, lost: boolean): PodOutcome {
    const timedOut = outcome.kind === 'failed' && (outcome.reason === 'Timeout' || outcome.reason === 'DrainTimeout');
    if (!lost && !timedOut) return outcome;
    const down = this.nodeDown(p);
    if (!down) return outcome;
    const key = podKey(p);
    this.leftForNodes.set(key, this.nodeWaitOf(key, down, 'upgrade'));
    const message = `${nodeLostMessage(down.node, down.health)}; left as it stands for the next run`;
    return {
      kind: 'failed',
      reason: 'NodeNotReady',
      message,
      ...('state' in outcome && outcome.state ? { state: outcome.state } : {}),
      writes: outcome.writes,
    };
  }
}
