// One runner per plan at a time: the Lease `kwave-<plan>` (coordination.k8s.io/v1) in the plan's
// first target namespace. A runner creates it (or takes over one that is free or expired), renews
// it while it runs (leaseRenewal.ts: retries, the renew deadline at which the lease is in doubt
// before anyone could take it over, and the reclaim that confirms it again), and clears the
// holder at the end. Writes that must be the holder's wait for `confirmed()`. Its
// requests go in the cluster's control lane, never behind pod traffic. Every update carries
// the resourceVersion last seen (the API requires it for leases), so two runners can never both
// believe they hold it: the loser gets 409.
//
// Who holds a lease and whether it has expired is leaseView.ts; waiting for a held lease,
// acquireWaiting.ts.
import { hostname } from 'node:os';
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { KubeError, toKubeError } from '../cluster/kubeError.js';
import { ExitCode, KwaveError } from '../errors.js';
import { realSleep, type Sleep } from '../sleep.js';
import {
  DEFAULT_LEASE_SECONDS,
  describeHolder,
  leaseName,
  leaseView,
  toDate,
  type LeaseApi,
  type LeaseView,
} from './leaseView.js';
import { holderGone } from './runnerIdentity.js';
import { renewalPolicy, renewalStep, renewalTimeLimit, type RenewalPolicy } from './leaseRenewal.js';

export interface LockTimers {
  now: () => Date;
  setInterval: (fn: () => void, ms: number) => unknown;
  clearInterval: (handle: unknown) => void;
  /** Waits `ms` (to watch whether a lease that looks expired is still being renewed). */
  sleep?: Sleep;
}

const realTimers: LockTimers = {
  now: () => new Date(),
  setInterval: (fn, ms) => {
    const t = setInterval(fn, ms);
    t.unref(); // the lock must never keep a finished process alive
    return t;
  },
  clearInterval: (h) => clearInterval(h as ReturnType<typeof setInterval>),
  sleep: realSleep,
};

export interface RunLockOptions {
  namespace: string;
  plan: string;
  /** This runner, e.g. runnerIdentity(). */
  identity: string;
  /** Default 15 s; renewed every fifth of it, in doubt when not renewed within four fifths (leaseRenewal.ts). */
  durationSeconds?: number;
  /**
   * The lease was lost: someone else took it (409 on renew, or found on a reclaim), or it was
   * deleted. The runner must stop. Called at most once.
   */
  onLost?: (message: string) => void;
  /** No renewal succeeded by the renew deadline: writes wait (`confirmed()`) until a reclaim succeeds or the lease is lost. */
  onDoubt?: (message: string) => void;
  /** The lease in doubt was confirmed ours again. */
  onConfirmed?: (message: string) => void;
  timers?: LockTimers;
  /**
   * Whether the holder of a lease that has not expired is known to be dead (default: same host
   * and its pid no longer exists, see holderGone). Such a lease is taken over at once.
   */
  holderGone?: (identity: string) => boolean;
}

/** Holds the plan's Lease while a rollout runs. */
export class RunLock {
  readonly name: string;
  private readonly durationSeconds: number;
  private readonly policy: RenewalPolicy;
  private readonly timers: LockTimers;
  private lease: V1Lease | undefined;
  private renewer: unknown;
  private renewal: Promise<void> | undefined;
  /** When the last successful renewal (or the acquisition) was sent: the renewTime the lease holds. */
  private lastRenew = 0;
  /** The last failed renewal attempt since then, and why it failed. */
  private failure: { atMs: number; message: string } | undefined;
  private lostMessage: string | undefined;
  private abandoned: string | undefined;
  /** Since when the lease is in doubt (the renew deadline passed), until a reclaim succeeds. */
  private doubtSinceMs: number | undefined;
  /** `confirmed()` calls waiting while the lease is in doubt. */
  private waiters: ((ours: boolean) => void)[] = [];

  constructor(
    private readonly cluster: LeaseApi,
    private readonly options: RunLockOptions,
  ) {
    this.name = leaseName(options.plan);
    this.durationSeconds = options.durationSeconds ?? DEFAULT_LEASE_SECONDS;
    this.policy = renewalPolicy(this.durationSeconds);
    this.timers = options.timers ?? realTimers;
  }

  /** Ours and confirmed: not lost, not in doubt. */
  get held(): boolean {
    return this.lease !== undefined && this.lostMessage === undefined && this.doubtSinceMs === undefined;
  }

  /**
   * Whether a write of the holder's may go out now: true at once while the lease is held; while
   * it is in doubt, waits until a reclaim confirms it (true) or it is lost (false); false once
   * lost or released.
   */
  confirmed(): Promise<boolean> {
    if (this.held) return Promise.resolve(true);
    if (this.lease === undefined || this.lostMessage !== undefined) return Promise.resolve(false);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The holder whose lease this run took over without its release (it died or stopped renewing). */
  get abandonedBy(): string | undefined {
    return this.abandoned;
  }

  /** Why the lease was lost, once it was. */
  get lost(): string | undefined {
    return this.lostMessage;
  }

  /**
   * Takes the lease and starts renewing it. Throws KwaveError LOCKED (exit 2) naming the holder
   * when another runner holds it and has renewed it within its duration; takes over a released
   * lease, and one that looks expired once it has stayed unchanged for a lease duration by our
   * clock (clocks may disagree). Other API failures throw KubeError.
   */
  async acquire(): Promise<void> {
    const now = this.timers.now();
    try {
      this.lease = await this.cluster.createLease(this.options.namespace, this.leaseBody(now, 0));
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 409)) throw err;
      this.lease = await this.takeOver();
    }
    this.lastRenew = now.getTime();
    this.failure = undefined;
    this.renewer = this.timers.setInterval(() => this.tick(), this.policy.tickMs);
  }

  /** Stops renewing and clears the holder (also of a lease in doubt, if it still names us) so the next run needs not wait for expiry. Never throws for a lease that is gone or taken. */
  async release(): Promise<void> {
    this.stopRenewing();
    await this.renewal; // its answer carries the resourceVersion to release with
    let lease = this.lease;
    this.lease = undefined;
    this.wake(false);
    if (!lease || this.lostMessage !== undefined) return;
    try {
      if (this.doubtSinceMs !== undefined) {
        // In doubt (renewals unanswered), the lease may still name us: then clear it, so the
        // next run need not wait for it to expire; if another runner took it, leave it.
        lease = await this.cluster.getLease(this.options.namespace, this.name);
        if (lease.spec?.holderIdentity !== this.options.identity) return;
      }
      const spec = { ...lease.spec, holderIdentity: undefined, renewTime: undefined, acquireTime: undefined };
      await this.cluster.updateLease(this.options.namespace, { ...lease, spec });
    } catch (err) {
      if (err instanceof KubeError && (err.code === 404 || err.code === 409)) return;
      throw err;
    }
  }

  // ---- internals -----------------------------------------------------------------------------

  private leaseBody(now: Date, transitions: number, base?: V1Lease): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...base?.metadata, name: this.name, namespace: this.options.namespace },
      spec: {
        holderIdentity: this.options.identity,
        leaseDurationSeconds: this.durationSeconds,
        // MicroTime: sent as `2006-01-02T15:04:05.000000Z`, the format the API server accepts.
        acquireTime: new V1MicroTime(now),
        renewTime: new V1MicroTime(now),
        leaseTransitions: transitions,
      },
    };
  }

  private async takeOver(): Promise<V1Lease> {
    let current = await this.cluster.getLease(this.options.namespace, this.name);
    let now = this.timers.now();
    let view = leaseView(current, now);
    const gone = this.options.holderGone ?? ((identity: string) => holderGone(identity, hostname()));
    if (!view.free && view.holder !== this.options.identity && !gone(view.holder!)) throw this.locked(view, now);
    if (view.expired && view.holder !== this.options.identity && !gone(view.holder!)) {
      // "Expired" compares the holder's clock (renewTime) with ours: a holder whose clock is
      // behind ours, or ours ahead, looks expired while it renews every few seconds. Trust only
      // what we see: a lease whose resourceVersion does not move for a whole lease duration by
      // our clock is abandoned; a live holder renews it meanwhile (client-go's leader election
      // judges by observed time for the same reason).
      // Any change (a renewal, or a release at the end of that run) means the holder was alive
      // when we started: we are the second runner, and are refused as if it had looked live.
      const before = current.metadata?.resourceVersion;
      const seen = view;
      await (this.timers.sleep ?? realSleep)(this.durationSeconds * 1000 + 1000);
      current = await this.cluster.getLease(this.options.namespace, this.name);
      now = this.timers.now();
      view = leaseView(current, now);
      if (current.metadata?.resourceVersion !== before)
        throw this.locked({ ...(view.holder ? view : seen), free: false, expired: false }, now);
    }
    const transitions = view.holder === this.options.identity ? view.transitions : view.transitions + 1;
    try {
      const taken = await this.cluster.updateLease(this.options.namespace, this.leaseBody(now, transitions, current));
      if (view.holder !== undefined && view.holder !== this.options.identity) this.abandoned = view.holder;
      return taken;
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 409)) throw err;
      // Another runner took it between our read and our write: name that one.
      const winner = await this.cluster.getLease(this.options.namespace, this.name);
      throw this.locked(leaseView(winner, this.timers.now()), this.timers.now());
    }
  }

  private locked(view: LeaseView, now: Date): KwaveError {
    return new KwaveError(
      'LOCKED',
      `plan "${this.options.plan}" is already being run by ${describeHolder(view, now)}; lease ${this.options.namespace}/${this.name}. ` +
        'Wait for that run to end, or stop it; an abandoned lease is taken over once it expires.',
      ExitCode.BAD_INPUT,
    );
  }

  /** Looks at the clock: renew, retry, hold writes back at the renew deadline (not when a stuck call returns), or reclaim. */
  private tick(): void {
    const nowMs = this.timers.now().getTime();
    const step = renewalStep(
      {
        nowMs,
        renewedAtMs: this.lastRenew,
        inFlight: this.renewal !== undefined,
        failedAtMs: this.failure?.atMs,
        inDoubt: this.doubtSinceMs !== undefined,
      },
      this.policy,
    );
    if (step === 'doubt') this.doubt();
    else if (step === 'renew') this.renewal = this.renew().finally(() => (this.renewal = undefined));
    else if (step === 'reclaim') this.renewal = this.reclaim().finally(() => (this.renewal = undefined));
  }

  private doubt(): void {
    if (this.doubtSinceMs !== undefined || this.lostMessage !== undefined) return;
    this.doubtSinceMs = this.timers.now().getTime();
    const why = this.failure ? `: ${this.failure.message}` : ': no answer';
    // The next attempt is a reclaim, at once: the failure that led here is not waited out again.
    this.failure = undefined;
    this.options.onDoubt?.(
      `could not renew the lease ${this.options.namespace}/${this.name} within ${this.policy.renewDeadlineMs / 1000}s${why}; ` +
        `pod and record writes wait until it is confirmed ours again (another runner may take it over ${this.durationSeconds}s after the last renewal)`,
    );
  }

  /**
   * In doubt: reads the lease and, if it still names us, renews it with an update guarded by
   * that read (a runner that took it over meanwhile would have changed it: 409, read again).
   */
  private async reclaim(): Promise<void> {
    const now = this.timers.now();
    const withinMs = this.policy.renewDeadlineMs;
    try {
      const current = await this.cluster.getLease(this.options.namespace, this.name, { withinMs });
      const holder = current.spec?.holderIdentity;
      if (holder !== this.options.identity) {
        const what = holder
          ? `another runner took it over (it names ${holder} now)`
          : 'another runner took it over and released it';
        return this.lose(
          `lost the lease ${this.options.namespace}/${this.name} while it could not be renewed: ${what}`,
        );
      }
      const spec = { ...current.spec, renewTime: new V1MicroTime(now) };
      this.lease = await this.cluster.updateLease(this.options.namespace, { ...current, spec }, { withinMs });
      this.renewed(now.getTime());
    } catch (err) {
      const e = toKubeError(err);
      if (e.code === 404) return this.loseDeleted();
      if (this.lostMessage === undefined) this.failure = { atMs: this.timers.now().getTime(), message: e.message };
    }
  }

  /** A renewal (or reclaim) sent at `sentAtMs` succeeded: the lease is ours, and confirmed if it was in doubt. */
  private renewed(sentAtMs: number): void {
    this.lastRenew = Math.max(this.lastRenew, sentAtMs);
    this.failure = undefined;
    if (this.doubtSinceMs === undefined) return;
    const seconds = Math.round((this.timers.now().getTime() - this.doubtSinceMs) / 1000);
    this.doubtSinceMs = undefined;
    this.options.onConfirmed?.(
      `the lease ${this.options.namespace}/${this.name} is confirmed ours again after ${seconds}s in doubt (nobody took it over); writes go on`,
    );
    this.wake(true);
  }

  private wake(ours: boolean): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(ours);
  }

  private async renew(): Promise<void> {
    if (!this.lease || this.lostMessage !== undefined) return;
    const now = this.timers.now();
    const withinMs = renewalTimeLimit({ nowMs: now.getTime(), renewedAtMs: this.lastRenew }, this.policy);
    try {
      const spec = { ...this.lease.spec, holderIdentity: this.options.identity, renewTime: new V1MicroTime(now) };
      this.lease = await this.cluster.updateLease(this.options.namespace, { ...this.lease, spec }, { withinMs });
      this.renewed(now.getTime());
    } catch (err) {
      const e = toKubeError(err);
      if (e.code === 404) return this.loseDeleted();
      if (e.code === 409 && (await this.stillOurs(withinMs))) return;
      if (this.lostMessage !== undefined) return;
      this.failure = { atMs: this.timers.now().getTime(), message: e.message };
      if (
        renewalStep({ nowMs: this.failure.atMs, renewedAtMs: this.lastRenew, inFlight: false }, this.policy) === 'doubt'
      )
        this.doubt();
    }
  }

  /**
   * After a 409 on renewal: whose the lease is now. Ours when the change was our own earlier
   * attempt, applied though its answer was lost (the request was repeated): then carry on from
   * it. Someone else's: the lease is lost. False when it cannot be told (counted as a failure).
   */
  private async stillOurs(withinMs: number): Promise<boolean> {
    let current: V1Lease;
    try {
      current = await this.cluster.getLease(this.options.namespace, this.name, { withinMs });
    } catch (err) {
      if (toKubeError(err).code === 404) this.loseDeleted();
      return false;
    }
    if (current.spec?.holderIdentity !== this.options.identity) {
      this.lose(`lost the lease ${this.options.namespace}/${this.name}: another runner took it over`);
      return false;
    }
    this.lease = current;
    this.renewed(toDate(current.spec.renewTime)?.getTime() ?? this.lastRenew);
    return true;
  }

  private loseDeleted(): void {
    this.lose(`lost the lease ${this.options.namespace}/${this.name}: it was deleted`);
  }

  private lose(message: string): void {
    if (this.lostMessage !== undefined) return;
    this.lostMessage = message;
    this.stopRenewing();
    this.options.onLost?.(message);
    this.wake(false);
  }

  private stopRenewing(): void {
    if (this.renewer !== undefined) this.timers.clearInterval(this.renewer);
    this.renewer = undefined;
  }
}
