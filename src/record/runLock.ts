// One runner per plan at a time: the Lease `kwave-<plan>` (coordination.k8s.io/v1) in the plan's
// first target namespace. A runner creates it (or takes over one that is free or expired), renews
// it every leaseDuration/3 while it runs, and clears the holder at the end. Every update carries
// the resourceVersion last seen (the API requires it for leases), so two runners can never both
// believe they hold it: the loser gets 409.
//
// The pure part (`leaseView`, `describeHolder`) says who holds a lease and whether it has
// expired; `kwave status` uses it too.
import { randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import type { Cluster } from '../cluster/cluster.js';
import { KubeError, toKubeError } from '../cluster/kubeError.js';
import { ExitCode, KwaveError } from '../errors.js';
import { formatAge } from '../durationText.js';
import { realSleep, type Sleep } from '../sleep.js';
import { recordName } from './record.js';

export const DEFAULT_LEASE_SECONDS = 15;

/** Who holds a lease, as seen at `now`. */
export interface LeaseView {
  holder?: string;
  acquiredAt?: Date;
  renewedAt?: Date;
  durationSeconds: number;
  transitions: number;
  /** No holder, or the holder stopped renewing (renewTime + leaseDurationSeconds < now). */
  free: boolean;
  expired: boolean;
}

/**
 * `user@host pid 1234 pidns 4026531836 #3fa9c1`: names the runner in messages, status and the
 * lease. The PID namespace and a per-process token keep two runners apart that share a hostname
 * and a pid (containers on the host network are all pid 1).
 */
export function runnerIdentity(pid = process.pid): string {
  const ns = pidNamespace();
  return `${currentUser()}@${hostname()} pid ${pid}${ns ? ` pidns ${ns}` : ''} #${PROCESS_TOKEN}`;
}

const PROCESS_TOKEN = randomBytes(3).toString('hex');

/** This process's PID namespace (Linux), so a pid is only judged where it means something. */
export function pidNamespace(): string | undefined {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
  } catch {
    return undefined;
  }
}

/** The person at the keyboard: $USER, else the OS account. */
export function currentUser(env: NodeJS.ProcessEnv = process.env): string {
  if (env.USER) return env.USER;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** A plain Date (V1MicroTime would print microseconds) from whatever the client handed over. */
const toDate = (t: unknown): Date | undefined => {
  if (t instanceof Date) return Number.isNaN(t.getTime()) ? undefined : new Date(t.getTime());
  if (typeof t === 'string') {
    const d = new Date(t);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
};

export function leaseView(lease: V1Lease, now: Date): LeaseView {
  const spec = lease.spec ?? {};
  const holder = spec.holderIdentity || undefined;
  const durationSeconds = spec.leaseDurationSeconds && spec.leaseDurationSeconds > 0 ? spec.leaseDurationSeconds : DEFAULT_LEASE_SECONDS;
  const renewedAt = toDate(spec.renewTime) ?? toDate(spec.acquireTime);
  const expired = holder !== undefined && (renewedAt === undefined || renewedAt.getTime() + durationSeconds * 1000 < now.getTime());
  return {
    ...(holder === undefined ? {} : { holder }),
    ...(toDate(spec.acquireTime) ? { acquiredAt: toDate(spec.acquireTime) } : {}),
    ...(renewedAt ? { renewedAt } : {}),
    durationSeconds,
    transitions: spec.leaseTransitions ?? 0,
    free: holder === undefined || expired,
    expired,
  };
}

/** `alice@laptop pid 1234 (renewed 3s ago, expires after 15s without renewal)`. */
export function describeHolder(view: LeaseView, now: Date): string {
  if (!view.holder) return 'nobody';
  const ago = view.renewedAt ? `${formatAge(now.getTime() - view.renewedAt.getTime())} ago` : 'never';
  const tail = view.expired ? `expired: not renewed for more than ${view.durationSeconds}s` : `expires after ${view.durationSeconds}s without renewal`;
  return `${view.holder} (renewed ${ago}${view.renewedAt ? ` at ${view.renewedAt.toISOString()}` : ''}; ${tail})`;
}

/** True while a process with this pid exists on this machine. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `identity` names a process of this host and PID namespace that no longer exists: a
 * runner killed with SIGKILL. Its lease need not run out before the next run takes over.
 * Identities from other hosts or PID namespaces, or in another format, are never judged gone.
 */
export function holderGone(identity: string, host: string, alive: (pid: number) => boolean = pidAlive, ns: string | undefined = pidNamespace()): boolean {
  const m = /^[^@\s]+@(\S+) pid (\d+)(?: pidns (\d+))?(?: #\w+)?$/.exec(identity);
  if (!m || m[1] !== host || m[3] !== ns) return false;
  const pid = Number(m[2]);
  return pid !== process.pid && !alive(pid);
}

/** The slice of Cluster the lock needs (tests pass a fake). */
export type LeaseApi = Pick<Cluster, 'getLease' | 'createLease' | 'updateLease'>;

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
  /** Default 15 s; renewed every third of it. */
  durationSeconds?: number;
  /**
   * The lease was lost: someone else took it (409 on renew) or it could not be renewed for a
   * whole lease duration. The runner must stop starting pods. Called at most once.
   */
  onLost?: (message: string) => void;
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
  private readonly timers: LockTimers;
  private lease: V1Lease | undefined;
  private renewer: unknown;
  private renewal: Promise<void> | undefined;
  private lastRenew = 0;
  private lostMessage: string | undefined;
  private abandoned: string | undefined;

  constructor(
    private readonly cluster: LeaseApi,
    private readonly options: RunLockOptions,
  ) {
    this.name = recordName(options.plan);
    this.durationSeconds = options.durationSeconds ?? DEFAULT_LEASE_SECONDS;
    this.timers = options.timers ?? realTimers;
  }

  get held(): boolean {
    return this.lease !== undefined && this.lostMessage === undefined;
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
    this.renewer = this.timers.setInterval(() => {
      // A renewal stuck in retries must not outlive the lease: past its duration without a
      // successful renewal, another runner may take over, so stop now, not when the call returns.
      if (this.timers.now().getTime() - this.lastRenew > this.durationSeconds * 1000) {
        this.lose(`could not renew the lease ${this.options.namespace}/${this.name} within ${this.durationSeconds}s; another runner may take it over`);
        return;
      }
      this.renewal ??= this.renew().finally(() => (this.renewal = undefined));
    }, (this.durationSeconds * 1000) / 3);
  }

  /** Stops renewing and clears the holder so the next run needs not wait for expiry. Never throws for a lease that is gone or taken. */
  async release(): Promise<void> {
    this.stopRenewing();
    await this.renewal; // its answer carries the resourceVersion to release with
    const lease = this.lease;
    this.lease = undefined;
    if (!lease || this.lostMessage !== undefined) return;
    const spec = { ...lease.spec, holderIdentity: undefined, renewTime: undefined, acquireTime: undefined };
    try {
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
      if (current.metadata?.resourceVersion !== before) throw this.locked({ ...(view.holder ? view : seen), free: false, expired: false }, now);
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

  private async renew(): Promise<void> {
    if (!this.lease || this.lostMessage !== undefined) return;
    const now = this.timers.now();
    try {
      const spec = { ...this.lease.spec, holderIdentity: this.options.identity, renewTime: new V1MicroTime(now) };
      this.lease = await this.cluster.updateLease(this.options.namespace, { ...this.lease, spec });
      this.lastRenew = now.getTime();
    } catch (err) {
      const e = toKubeError(err);
      if (e.code === 409 || e.code === 404) {
        this.lose(`lost the lease ${this.options.namespace}/${this.name}: ${e.code === 409 ? 'another runner took it over' : 'it was deleted'}`);
      } else if (now.getTime() - this.lastRenew > this.durationSeconds * 1000) {
        this.lose(`could not renew the lease ${this.options.namespace}/${this.name} for ${this.durationSeconds}s (${e.message}); another runner may take it over`);
      }
    }
  }

  private lose(message: string): void {
    if (this.lostMessage !== undefined) return;
    this.lostMessage = message;
    this.stopRenewing();
    this.options.onLost?.(message);
  }

  private stopRenewing(): void {
    if (this.renewer !== undefined) this.timers.clearInterval(this.renewer);
    this.renewer = undefined;
  }
}

export interface AcquireWait {
  /** How long to keep trying while another runner holds the lease; 0 refuses at once. */
  waitMs: number;
  /** Between attempts; default 2 s. */
  everyMs?: number;
  signal?: AbortSignal;
  /** Told once, when the first attempt finds the lease held. */
  onWait?: (message: string) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `lock.acquire()`, retried while another runner holds the lease, for up to `waitMs`: a Job's
 * next pod, started after its predecessor died with the lease held, takes it over once it expires
 * instead of being refused as a second runner. Other failures are thrown at once.
 */
export async function acquireWaiting(lock: Pick<RunLock, 'acquire'>, wait: AcquireWait): Promise<void> {
  const now = wait.now ?? Date.now;
  const sleep = wait.sleep ?? realSleep;
  const deadline = now() + wait.waitMs;
  let told = false;
  for (;;) {
    try {
      return await lock.acquire();
    } catch (err) {
      const held = err instanceof KwaveError && err.code === 'LOCKED';
      if (!held || now() >= deadline || wait.signal?.aborted) throw err;
      if (!told) wait.onWait?.(`${err.message.split('. ')[0]}; waiting up to ${Math.round(wait.waitMs / 1000)}s for it (--lease-wait)`);
      told = true;
      await sleep(Math.min(wait.everyMs ?? 2000, Math.max(0, deadline - now())));
    }
  }
}

/** Reads the plan's lease for display; undefined when there is none. */
export async function readLease(cluster: LeaseApi, namespace: string, plan: string, now: Date): Promise<LeaseView | undefined> {
  try {
    return leaseView(await cluster.getLease(namespace, recordName(plan)), now);
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return undefined;
    throw err;
  }
}
