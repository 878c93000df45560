// The pretend container runtime: one container's life on a node, as timed steps. A changed spec
// kills the container and starts the new image: pull (unless the node has it), create, start
// with a new containerID, restartCount + 1, lastState.terminated and the imageID of the image
// table. Pulls can fail (ErrImagePull → ImagePullBackOff with the kubelet's back-off), images can
// crash (CrashLoopBackOff) or be slow to become ready. Time comes from the injected clock; every
// step ends by telling the owner the pod changed, so that it reports the new status.
import { backOffMs, goDuration, randomHex, type Clock, type SimTime, type Timing } from '../clock.js';
import { flatString } from '../flatString.js';
import {
  imageIdOf,
  parseImageRef,
  pullNotFoundError,
  type ImageInfo,
  type ImageRef,
  type ImageTable,
} from '../images.js';
import type { ContainerStatus } from '../podStatus.js';
import {
  exitsAtOnce,
  pullPolicy,
  rfc3339,
  type ContainerRuntime,
  type ContainerSpec,
  type PodRuntime,
} from './pods.js';

export interface RuntimeContext {
  images: ImageTable;
  timing: Timing;
  time: SimTime;
  clock: Clock;
  random: () => number;
  /** Normalized names of the images present on a node (its image cache). */
  imagesOn(node: string): ReadonlySet<string>;
  /** A pull finished: the image is in the node's cache from now on. */
  addImage(node: string, fullName: string): void;
  /** The node's registry mirror lacks this image: pulls of it fail there. */
  lacks(node: string, fullName: string): boolean;
  event(
    rt: PodRuntime,
    c: ContainerRuntime | undefined,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): void;
  /** The pod's containers changed: its status is to be reported. */
  changed(rt: PodRuntime): void;
  onError(err: unknown): void;
}

export class ContainerRuntimeModel {
  constructor(private readonly ctx: RuntimeContext) {}

  newContainerId(): string {
    return flatString(`containerd://${randomHex(this.ctx.random, 64)}`);
  }

  /** A container that has been running (and ready) for a while: how the world starts. */
  runningStatus(spec: ContainerSpec, ref: ImageRef, info: ImageInfo, now: string): ContainerStatus {
    return {
      name: spec.name,
      state: { running: { startedAt: now } },
      lastState: {},
      ready: true,
      restartCount: 0,
      image: ref.fullName,
      imageID: imageIdOf(info),
      containerID: this.newContainerId(),
      started: true,
    };
  }

  /**
   * Kills the container if it runs, then starts one from the new spec. While a start is under way
   * (kill, pull, create: one sync of the real kubelet, which reads a newer spec only after it), the
   * new spec waits: the container of the older spec starts, then this restart kills it.
   */
  restart(
    rt: PodRuntime,
    c: ContainerRuntime,
    spec: ContainerSpec,
    hash: string,
    why = `Container ${spec.name} definition changed, will be restarted`,
  ): void {
    if (c.starting) {
      c.next = hash === c.hash ? undefined : { spec, hash };
      return;
    }
    this.cancel(c);
    c.spec = spec;
    c.hash = hash;
    c.starting = true;
    // The kubelet's back-offs are keyed by the container's spec (and image): a new spec starts afresh.
    c.pullFailures = 0;
    c.crashes = 0;
    if (!c.status.state.running) {
      this.beginStart(rt, c);
      return;
    }
    this.ctx.event(rt, c, 'Normal', 'Killing', why);
    this.after(rt, c, this.ctx.time.step(this.ctx.timing.stopMs), () => {
      this.terminate(c, 0, 'Completed');
      this.beginStart(rt, c);
    });
  }

  /** Takes up a container that already runs (per the pod's status): it goes on from there. */
  carryOn(rt: PodRuntime, c: ContainerRuntime, info: ImageInfo | undefined): void {
    if (info?.crash) this.scheduleCrash(rt, c);
    else if (!c.status.ready) this.scheduleReady(rt, c, info);
  }

  /** Pull if needed, then create and start the container from its spec's image. */
  beginStart(rt: PodRuntime, c: ContainerRuntime): void {
    c.starting = true;
    const image = c.spec.image;
    const ref = parseImageRef(image);
    if ('error' in ref) {
      const message = `Failed to apply default image tag "${image}": ${ref.error}`;
      this.setWaiting(c, 'InvalidImageName', message);
      this.ctx.event(rt, c, 'Warning', 'InspectFailed', message);
      this.ctx.event(rt, c, 'Warning', 'Failed', 'Error: InvalidImageName');
      this.startEnded(rt, c);
      return;
    }
    const present = this.ctx.imagesOn(rt.node).has(ref.fullName);
    const policy = pullPolicy(c.spec, ref);
    if (policy === 'Never' && !present) {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      this.setWaiting(c, 'ErrImageNeverPull', message);
      this.ctx.event(rt, c, 'Warning', 'ErrImageNeverPull', message);
      this.startEnded(rt, c);
      return;
    }
    if (policy !== 'Always' && present) {
      this.ctx.event(rt, c, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
      this.after(rt, c, this.ctx.time.step(this.ctx.timing.startMs), () => this.create(rt, c, ref));
      return;
    }
    this.pull(rt, c, ref);
  }

  private pull(rt: PodRuntime, c: ContainerRuntime, ref: ImageRef): void {
    c.starting = true;
    const image = c.spec.image;
    const info = this.ctx.images.resolve(ref);
    const ms = this.ctx.time.step(info?.pullMs ?? this.ctx.timing.pullMs);
    this.ctx.event(rt, c, 'Normal', 'Pulling', `Pulling image "${image}"`);
    this.after(rt, c, ms, () => {
      if (!info || info.pullFails || this.ctx.lacks(rt.node, info.fullName)) {
        this.pullFailed(rt, c, ref);
        return;
      }
      this.ctx.addImage(rt.node, ref.fullName);
      const took = goDuration(Math.round(ms * 1e6) / 1e6);
      this.ctx.event(
        rt,
        c,
        'Normal',
        'Pulled',
        `Successfully pulled image "${image}" in ${took} (${took} including waiting). Image size: ${info.sizeBytes} bytes.`,
      );
      this.after(rt, c, this.ctx.time.step(this.ctx.timing.startMs), () => this.create(rt, c, ref));
    });
  }

  /** ErrImagePull now, ImagePullBackOff a moment later, another pull once the back-off (10s, 20s … 5m) is over. */
  private pullFailed(rt: PodRuntime, c: ContainerRuntime, ref: ImageRef): void {
    const image = c.spec.image;
    const error = pullNotFoundError(ref.fullName);
    c.pullFailures++;
    this.ctx.event(rt, c, 'Warning', 'Failed', `Failed to pull image "${image}": ${error}`);
    this.ctx.event(rt, c, 'Warning', 'Failed', 'Error: ErrImagePull');
    this.setWaiting(c, 'ErrImagePull', error);
    if (this.startEnded(rt, c)) return;
    const backOff = this.ctx.time.exact(backOffMs(c.pullFailures));
    const shown = Math.min(this.ctx.time.exact(1000), backOff / 2);
    this.after(rt, c, shown, () => {
      const message = `Back-off pulling image "${image}"`;
      this.setWaiting(c, 'ImagePullBackOff', message);
      this.ctx.event(rt, c, 'Normal', 'BackOff', message);
      this.ctx.event(rt, c, 'Warning', 'Failed', 'Error: ImagePullBackOff');
      this.after(rt, c, backOff - shown, () => this.pull(rt, c, ref));
    });
  }

  private create(rt: PodRuntime, c: ContainerRuntime, ref: ImageRef): void {
    const info = this.ctx.images.resolve(ref);
    if (!info) {
      // The image left the node meanwhile (cannot happen today); treat as a failed pull.
      this.pullFailed(rt, c, ref);
      return;
    }
    const previous = c.status;
    const ranBefore = previous.containerID !== undefined;
    c.status = {
      name: c.spec.name,
      state: { running: { startedAt: rfc3339(this.ctx.clock.now()) } },
      lastState: previous.state.terminated ? { terminated: previous.state.terminated } : previous.lastState,
      ready: false,
      restartCount: ranBefore ? previous.restartCount + 1 : previous.restartCount,
      image: ref.fullName,
      imageID: imageIdOf(info),
      containerID: this.newContainerId(),
      started: true,
    };
    this.ctx.event(rt, c, 'Normal', 'Created', `Created container: ${c.spec.name}`);
    this.ctx.event(rt, c, 'Normal', 'Started', `Started container ${c.spec.name}`);
    if (this.startEnded(rt, c)) return;
    if (exitsAtOnce(c.spec)) this.exitAtOnce(rt, c);
    else if (info.crash) this.scheduleCrash(rt, c);
    else this.scheduleReady(rt, c, info);
  }

  /**
   * The sync that started the container (or failed to) is over: a spec read meanwhile restarts it
   * now. Says whether it did.
   */
  private startEnded(rt: PodRuntime, c: ContainerRuntime): boolean {
    c.starting = false;
    const next = c.next;
    if (next === undefined) return false;
    c.next = undefined;
    this.restart(rt, c, next.spec, next.hash);
    return true;
  }

  private scheduleReady(rt: PodRuntime, c: ContainerRuntime, info: ImageInfo | undefined): void {
    this.after(rt, c, this.ctx.time.step(info?.readyAfterMs ?? this.ctx.timing.readyMs), () => {
      c.status = { ...c.status, ready: true };
    });
  }

  /**
   * A crashing image exits with code 1 before it is ever ready. The first crash restarts at once;
   * later ones wait a back-off of 10s, 20s, 40s … 5m (CrashLoopBackOff), as the kubelet does.
   */
  private scheduleCrash(rt: PodRuntime, c: ContainerRuntime): void {
    this.after(rt, c, this.ctx.time.step(this.ctx.timing.crashMs), () => {
      this.terminate(c, 1, 'Error');
      this.restartAfterExit(rt, c);
    });
  }

  /**
   * The "container crashed" fault: the running container exits with code 1 (an application
   * crash, not a spec change) and is restarted as after any exit, at once the first time since
   * its spec last changed. False when it was not running.
   */
  crash(rt: PodRuntime, c: ContainerRuntime): boolean {
    if (!c.status.state.running) return false;
    this.cancel(c);
    this.terminate(c, 1, 'Error');
    this.restartAfterExit(rt, c);
    this.ctx.changed(rt);
    return true;
  }

  /** A command that exits at once (`true`): Completed with code 0; only restartPolicy Always starts it again. */
  private exitAtOnce(rt: PodRuntime, c: ContainerRuntime): void {
    this.after(rt, c, 0, () => {
      this.terminate(c, 0, 'Completed');
      if (rt.restartPolicy === 'Always') this.restartAfterExit(rt, c);
    });
  }

  /** An exited container of a pod that restarts it: at once the first time, then after a back-off (CrashLoopBackOff). */
  private restartAfterExit(rt: PodRuntime, c: ContainerRuntime): void {
    c.crashes++;
    if (c.crashes === 1) {
      this.beginStart(rt, c);
      return;
    }
    const backOff = backOffMs(c.crashes - 1);
    const who = `${rt.name}_${rt.namespace}(${rt.uid})`;
    this.setWaiting(
      c,
      'CrashLoopBackOff',
      `back-off ${goDuration(backOff)} restarting failed container=${c.spec.name} pod=${who}`,
    );
    this.ctx.event(rt, c, 'Warning', 'BackOff', `Back-off restarting failed container ${c.spec.name} in pod ${who}`);
    this.after(rt, c, this.ctx.time.exact(backOff), () => this.beginStart(rt, c));
  }

  /** The running container exits; its status shows the termination until the next one starts. */
  terminate(c: ContainerRuntime, exitCode: number, reason: string): void {
    const running = c.status.state.running;
    if (!running) return;
    c.status = {
      ...c.status,
      state: {
        terminated: {
          exitCode,
          reason,
          startedAt: running.startedAt,
          finishedAt: rfc3339(this.ctx.clock.now()),
          containerID: c.status.containerID,
        },
      },
      ready: false,
      started: false,
    };
  }

  /** Waiting state; a termination shown so far moves to lastState, as the kubelet reports it. */
  private setWaiting(c: ContainerRuntime, reason: string, message?: string): void {
    const s = c.status;
    c.status = {
      ...s,
      state: { waiting: message ? { reason, message } : { reason } },
      lastState: s.state.terminated ? { terminated: s.state.terminated } : s.lastState,
      ready: false,
      started: false,
    };
  }

  /** Graceful deletion: stop every container (as fast as nginx does on SIGTERM, within the grace period). */
  beginTermination(rt: PodRuntime, graceSeconds: number): void {
    rt.terminating = true;
    for (const c of rt.containers.values()) {
      this.cancel(c);
      c.starting = false;
      c.next = undefined;
      if (c.status.state.running) this.ctx.event(rt, c, 'Normal', 'Killing', `Stopping container ${c.spec.name}`);
    }
    const ms = Math.min(this.ctx.time.step(this.ctx.timing.stopMs), this.ctx.time.exact(graceSeconds * 1000));
    rt.podTimer = this.ctx.clock.setTimeout(() => {
      rt.podTimer = undefined;
      if (!rt.alive) return;
      for (const c of rt.containers.values()) this.terminate(c, 0, 'Completed');
      rt.sandboxReady = false;
      rt.terminated = true;
      this.ctx.changed(rt);
    }, ms);
  }

  /** Runs `fn` after `ms` unless the container's lifecycle has moved on; then reports the pod changed. */
  private after(rt: PodRuntime, c: ContainerRuntime, ms: number, fn: () => void): void {
    this.cancel(c, false);
    const epoch = c.epoch;
    c.timer = this.ctx.clock.setTimeout(() => {
      c.timer = undefined;
      if (!rt.alive || c.epoch !== epoch) return;
      try {
        fn();
      } catch (err) {
        this.ctx.onError(err);
      }
      this.ctx.changed(rt);
    }, ms);
  }

  cancel(c: ContainerRuntime, newEpoch = true): void {
    if (c.timer !== undefined) this.ctx.clock.clearTimeout(c.timer);
    c.timer = undefined;
    if (newEpoch) c.epoch++;
  }

  /** Stops every timer of the pod: it is no longer this kubelet's. */
  drop(rt: PodRuntime): void {
    rt.alive = false;
    if (rt.podTimer !== undefined) this.ctx.clock.clearTimeout(rt.podTimer);
    for (const c of rt.containers.values()) this.cancel(c);
  }
}
