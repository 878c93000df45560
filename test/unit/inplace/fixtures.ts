// Builders for pods as the API server and kubelet report them, for the in-place unit tests.
import assert from 'node:assert/strict';
import type { V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { DecideContext, Step } from '../../../src/inplace/decide.js';
import { encodeState, STATE_ANNOTATION, type InPlaceState } from '../../../src/inplace/state.js';

export const GATE = 'kwave.dev/in-place-ready';
export const OLD = 'nginx:1.14.2';
export const NEW = 'nginx:1.25.3';
/** Same digest as OLD. */
export const RETAG = 'nginx:1.14.2-retag';
export const T0 = Date.parse('2025-01-01T00:00:00Z');

/** The upgrade of web-0's nginx to NEW by plan web, revision r1, wave 2, at T0, with a 5 s drain. */
export const UPGRADE_CTX: DecideContext = {
  plan: 'web',
  revision: 'r1',
  wave: 2,
  direction: 'upgrade',
  containers: [{ name: 'nginx', image: NEW }],
  gate: { conditionType: GATE, required: true },
  nowMs: T0,
  drainMs: 5_000,
  podTimeoutMs: 300_000,
  minReadyMs: 10_000,
};

/** `step`, asserted to be of `kind`. */
export function expectKind<K extends Step['kind']>(step: Step, kind: K): Extract<Step, { kind: K }> {
  assert.equal(step.kind, kind, `expected ${kind}, got ${JSON.stringify(step)}`);
  return step as Extract<Step, { kind: K }>;
}

const hex = (c: string) => `sha256:${c.repeat(64)}`;
const DIGESTS: Record<string, string> = {
  [OLD]: hex('a'),
  [RETAG]: hex('a'),
  [NEW]: hex('b'),
  'envoy:1.29': hex('c'),
  'envoy:1.30': hex('d'),
  'nginx:moved': hex('e'),
  'nginx:crash': hex('f'),
  'nginx:broken': hex('9'),
};

function repoOf(image: string): string {
  const noDigest = image.split('@')[0] as string;
  const colon = noDigest.lastIndexOf(':');
  const repo = colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
  return repo.includes('/') ? `docker.io/${repo}` : `docker.io/library/${repo}`;
}

export function digestFor(image: string): string {
  const at = image.indexOf('@');
  if (at >= 0) return image.slice(at + 1);
  const d = DIGESTS[image];
  if (!d) throw new Error(`fixture has no digest for ${image}`);
  return d;
}

/** `docker.io/library/nginx@sha256:…`, as containerd reports it. */
export function imageIDOf(image: string): string {
  return `${repoOf(image)}@${digestFor(image)}`;
}

/** `docker.io/library/nginx:1.25.3`, as the kubelet reports status.image. */
export function statusImageOf(image: string): string {
  if (image.includes('@')) return `${repoOf(image)}@${image.split('@')[1]}`;
  const tag = image.slice(image.lastIndexOf(':') + 1);
  return `${repoOf(image)}:${tag}`;
}

export interface ContainerOpts {
  name: string;
  /** Image the running container came from (status); also the spec image unless `specImage`. */
  image: string;
  specImage?: string;
  imageID?: string;
  containerID?: string;
  restartCount?: number;
  ready?: boolean;
  startedAt?: number;
  waiting?: { reason: string; message?: string };
  terminated?: { exitCode: number; reason?: string };
  lastTerminated?: { exitCode: number; reason?: string; containerID?: string; startedAt?: number; finishedAt?: number };
  /** The kubelet has not reported this container yet. */
  noStatus?: boolean;
  /** status.image as reported, if not the usual spelling of `image`. */
  statusImage?: string;
}

export interface PodOpts {
  name?: string;
  namespace?: string;
  uid?: string;
  rv?: string;
  containers?: ContainerOpts[];
  /** Gate condition status; `null` = no condition at all. */
  gate?: 'True' | 'False' | 'Unknown' | null;
  gateReason?: string;
  gateMessage?: string;
  gateSince?: number;
  declaresGate?: boolean;
  /** Default: every container ready and the gate (if declared) True. */
  ready?: boolean;
  readySince?: number;
  state?: InPlaceState | string;
  deleting?: boolean;
  /** Times as strings, as raw watch JSON has them, instead of Dates. */
  stringTimes?: boolean;
}

export function makePod(o: PodOpts = {}): V1Pod {
  const containers = o.containers ?? [{ name: 'nginx', image: OLD }];
  const time = (ms: number) => (o.stringTimes ? new Date(ms).toISOString() : new Date(ms)) as Date;
  const statuses: V1ContainerStatus[] = containers
    .filter((c) => !c.noStatus)
    .map((c) => {
      const running = !c.waiting && !c.terminated;
      const cs: V1ContainerStatus = {
        name: c.name,
        image: c.statusImage ?? statusImageOf(c.image),
        imageID: c.imageID ?? (c.waiting ? '' : imageIDOf(c.image)),
        containerID: c.containerID ?? `containerd://${c.name}-0`,
        restartCount: c.restartCount ?? 0,
        ready: running && (c.ready ?? true),
        state: c.waiting
          ? { waiting: { ...c.waiting } }
          : c.terminated
            ? { terminated: { ...c.terminated } }
            : { running: { startedAt: time(c.startedAt ?? T0 - 3_600_000) } },
      };
      if (c.lastTerminated) {
        const { startedAt, finishedAt, ...rest } = c.lastTerminated;
        cs.lastState = {
          terminated: {
            ...rest,
            ...(startedAt !== undefined ? { startedAt: time(startedAt) } : {}),
            ...(finishedAt !== undefined ? { finishedAt: time(finishedAt) } : {}),
          },
        };
      }
      return cs;
    });
  const declares = o.declaresGate ?? true;
  const gate = o.gate === undefined ? 'True' : o.gate;
  const conditions: V1PodCondition[] = [];
  if (gate !== null) {
    const c: V1PodCondition = { type: GATE, status: gate, lastTransitionTime: time(o.gateSince ?? T0 - 3_600_000) };
    if (o.gateReason !== undefined) c.reason = o.gateReason;
    if (o.gateMessage !== undefined) c.message = o.gateMessage;
    conditions.push(c);
  }
  const allReady = statuses.length === containers.length && statuses.every((s) => s.ready);
  const ready = o.ready ?? (allReady && (!declares || gate === 'True'));
  conditions.push({
    type: 'Ready',
    status: ready ? 'True' : 'False',
    lastTransitionTime: time(o.readySince ?? T0 - 3_600_000),
  });

  const annotations: Record<string, string> = {};
  if (o.state !== undefined)
    annotations[STATE_ANNOTATION] = typeof o.state === 'string' ? o.state : encodeState(o.state);
  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: o.name ?? 'web-0',
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? 'uid-web-0',
      resourceVersion: o.rv ?? '100',
      annotations,
      labels: { app: 'web' },
    },
    spec: {
      containers: containers.map((c) => ({ name: c.name, image: c.specImage ?? c.image })),
      readinessGates: declares ? [{ conditionType: GATE }] : [],
    },
    status: { phase: 'Running', conditions, containerStatuses: statuses },
  };
  if (o.deleting) pod.metadata!.deletionTimestamp = time(T0);
  return pod;
}
