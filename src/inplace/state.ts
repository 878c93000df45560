// The `kwave.dev/in-place-state` annotation (docs/rollout.md, "Per pod"): written in the same
// guarded patch as the new images, it lets any later run tell from the pod alone where its
// upgrade (or rollback) stands. Decoding never throws: a damaged annotation is reported as data.
import type { V1Pod } from '@kubernetes/client-node';
import { annotation } from './podView.js';
import type { Resources } from './resources.js';
import { textMemo } from './textMemo.js';

export const STATE_ANNOTATION = 'kwave.dev/in-place-state';

export type Direction = 'upgrade' | 'rollback';

/** One container as it was just before the patch, and what the patch asked for. */
export interface ContainerRecord {
  /** Spec image before the patch: what a rollback puts back. */
  fromImage: string;
  /** `status.imageID` before the patch ('' if the container had none). */
  fromImageID: string;
  /** `status.containerID` before the patch ('' if none). */
  fromContainerID: string;
  fromRestartCount: number;
  /** Spec image the patch set. */
  toImage: string;
  /** Rollback only: the image ID the container must come back to (the upgrade's `fromImageID`). */
  toImageID?: string;
  /**
   * Rollback only: the container the upgrade meant to replace. If the kubelet never got to
   * replace it, it is still running the old image and the rollback needs no restart.
   */
  originContainerID?: string;
  /** Resize only: the spec's CPU and memory before the flow (what a rollback resizes back to). */
  fromResources?: Resources;
  /** Resize only: the CPU and memory the flow resizes the container to (`pods/resize`). */
  toResources?: Resources;
}

export interface InPlaceState {
  plan: string;
  revision: string;
  /** 1-based wave of the plan the pod was patched in. */
  wave: number;
  /** When the image patch was made (RFC 3339); `podTimeout` runs from here. */
  startedAt: string;
  /** Absent in the annotation means `upgrade`. */
  direction: Direction;
  containers: Record<string, ContainerRecord>;
  /**
   * The flow keeps the pod in service (its gate open) throughout: a resize that restarts no
   * container under `drain: whenRestarting`. Absent means the flow drains.
   */
  inService?: boolean;
}

/** A plan and revision, as a state annotation or a gate message names its writer. */
export interface Owner {
  plan: string;
  revision: string;
}

/** Whether `owner` is this plan's `revision`: the one test of "this run's own". */
export function ownedBy(owner: Owner | undefined, plan: string, revision: string): boolean {
  return owner !== undefined && owner.plan === plan && owner.revision === revision;
}

export type DecodedState = { ok: true; state: InPlaceState } | { ok: false; error: string };

export type StateReading =
  { kind: 'absent' } | { kind: 'ok'; state: InPlaceState } | { kind: 'malformed'; error: string; raw: string };

/** JSON with a fixed key order (containers by name), so equal states give equal text. */
export function encodeState(state: InPlaceState): string {
  const containers: Record<string, ContainerRecord> = {};
  for (const name of Object.keys(state.containers).sort()) {
    const c = state.containers[name] as ContainerRecord;
    const rec: ContainerRecord = {
      fromImage: c.fromImage,
      fromImageID: c.fromImageID,
      fromContainerID: c.fromContainerID,
      fromRestartCount: c.fromRestartCount,
      toImage: c.toImage,
    };
    if (c.toImageID !== undefined) rec.toImageID = c.toImageID;
    if (c.originContainerID !== undefined) rec.originContainerID = c.originContainerID;
    if (c.fromResources !== undefined) rec.fromResources = c.fromResources;
    if (c.toResources !== undefined) rec.toResources = c.toResources;
    containers[name] = rec;
  }
  return JSON.stringify({
    plan: state.plan,
    revision: state.revision,
    wave: state.wave,
    startedAt: state.startedAt,
    direction: state.direction,
    containers,
    ...(state.inService ? { inService: true } : {}),
  });
}

/** Parses and checks an annotation value; says what is wrong instead of throwing. */
export function decodeState(text: string): DecodedState {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `not JSON (${(e as Error).message})` };
  }
  if (!isObject(raw)) return { ok: false, error: 'expected a JSON object' };
  const problems: string[] = [];
  const str = (o: Record<string, unknown>, key: string, where: string, allowEmpty = false): string => {
    const v = o[key];
    if (typeof v !== 'string' || (!allowEmpty && v === '')) {
      problems.push(`${where}${key}: expected a ${allowEmpty ? '' : 'non-empty '}string`);
      return '';
    }
    return v;
  };
  const count = (o: Record<string, unknown>, key: string, where: string): number => {
    const v = o[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
      problems.push(`${where}${key}: expected a whole number ≥ 0`);
      return 0;
    }
    return v;
  };

  const plan = str(raw, 'plan', '');
  const revision = str(raw, 'revision', '');
  const wave = count(raw, 'wave', '');
  const startedAt = str(raw, 'startedAt', '');
  if (startedAt !== '' && Number.isNaN(Date.parse(startedAt))) problems.push('startedAt: expected an RFC 3339 time');
  let direction: Direction = 'upgrade';
  if (raw.direction !== undefined) {
    if (raw.direction === 'upgrade' || raw.direction === 'rollback') direction = raw.direction;
    else problems.push('direction: expected "upgrade" or "rollback"');
  }
  const containers: Record<string, ContainerRecord> = {};
  if (!isObject(raw.containers) || Object.keys(raw.containers).length === 0) {
    problems.push('containers: expected an object with at least one container');
  } else {
    for (const [name, value] of Object.entries(raw.containers)) {
      const where = `containers.${name}.`;
      if (!isObject(value)) {
        problems.push(`containers.${name}: expected an object`);
        continue;
      }
      const rec: ContainerRecord = {
        fromImage: str(value, 'fromImage', where),
        fromImageID: str(value, 'fromImageID', where, true),
        fromContainerID: str(value, 'fromContainerID', where, true),
        fromRestartCount: count(value, 'fromRestartCount', where),
        toImage: str(value, 'toImage', where),
      };
      if (value.toImageID !== undefined) rec.toImageID = str(value, 'toImageID', where, true);
      if (value.originContainerID !== undefined) rec.originContainerID = str(value, 'originContainerID', where, true);
      for (const key of ['fromResources', 'toResources'] as const) {
        if (value[key] === undefined) continue;
        const res = resources(value[key]);
        if (res === undefined) problems.push(`${where}${key}: expected requests and limits of cpu and memory`);
        else rec[key] = res;
      }
      containers[name] = rec;
    }
  }
  if (raw.inService !== undefined && typeof raw.inService !== 'boolean') problems.push('inService: expected a boolean');
  if (problems.length > 0) return { ok: false, error: problems.join('; ') };
  const state: InPlaceState = { plan, revision, wave, startedAt, direction, containers };
  if (raw.inService === true) state.inService = true;
  return { ok: true, state };
}

/** `{requests?: {cpu?, memory?}, limits?: …}` with string quantities; undefined for anything else. */
function resources(v: unknown): Resources | undefined {
  if (!isObject(v)) return undefined;
  const out: Resources = {};
  for (const [kind, list] of Object.entries(v)) {
    if ((kind !== 'requests' && kind !== 'limits') || !isObject(list)) return undefined;
    const q: Record<string, string> = {};
    for (const [name, amount] of Object.entries(list)) {
      if ((name !== 'cpu' && name !== 'memory') || typeof amount !== 'string') return undefined;
      q[name] = amount;
    }
    out[kind] = q;
  }
  return out;
}

const ABSENT: StateReading = Object.freeze({ kind: 'absent' });

// Every decision reads the pod's annotation again, and between kwave's writes it does not change
// (the kubelet's five status writes of an upgrade carry the same text): each text is decoded once.
// Bounded: a run holds one text per pod in flight; a full cache starts over.
const reading = textMemo((raw): StateReading => {
  const decoded = decodeState(raw);
  return deepFreeze<StateReading>(
    decoded.ok ? { kind: 'ok', state: decoded.state } : { kind: 'malformed', error: decoded.error, raw },
  );
}, 4096);

/**
 * The pod's state annotation: absent, decoded, or malformed (with the reason and the raw text).
 * The reading is shared by every pod version with the same text, so it is frozen.
 */
export function readState(pod: V1Pod): StateReading {
  const raw = annotation(pod, STATE_ANNOTATION);
  return raw === undefined ? ABSENT : reading(raw);
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) deepFreeze(v as object);
  return Object.freeze(o);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
