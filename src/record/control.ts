// Remote control of a rollout (`kwave pause | resume | abort PLAN`, from any machine): requests
// kept under the key `control.json` of the decisions ConfigMap (`kwave-<plan>.control`, record.ts),
// written only by those commands (with a resourceVersion-guarded update, never under the run's
// lease) and watched by the runner, which may only read it. Pure: the state, how a request
// changes it, and what a runner makes of it.
//
// - pause is a state: while it stands, a runner of that revision starts no new pod (pods in
//   flight finish) and waits, phase Paused; a run started while it stands waits from the start.
//   A pause given for another revision of the plan does not hold this one back.
// - resume ends the pause.
// - abort is addressed to the runner that holds the lease when it is asked (by its identity), so
//   it never outlives that run: an upgrading runner halts as on a failure and applies the plan's
//   rollback policy (exit 3); a rolling-back one (`kwave rollback`) reverts no more pods, lets
//   those in flight finish and ends Halted (exit 3). With no runner holding the lease there is nothing to abort: refused. An
//   abort also ends a pause (a halted run has nothing left to pause).

export const CONTROL_KEY = 'control.json';

const CONTROL_ACTIONS = ['pause', 'resume', 'abort'] as const;
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

/** Requests kept in the key's history (it only explains; the state is in `paused` and `abort`). */
export const CONTROL_HISTORY_LIMIT = 20;

export interface ControlRequest {
  action: ControlAction;
  /** Who asked: the cluster's name for them (SelfSubjectReview) and `user@host`, or `user@host` alone. */
  by: string;
  /** The API server's name for who asked (SelfSubjectReview), when it told. */
  user?: string;
  /** ISO time of the request. */
  at: string;
  /** The plan revision the record was at when asked. */
  revision?: string;
  /** abort: the identity of the runner that held the lease. */
  holder?: string;
}

export interface ControlState {
  paused?: ControlRequest;
  abort?: ControlRequest;
  history: ControlRequest[];
}

export const emptyControl = (): ControlState => ({ history: [] });

/** What the command knows of the rollout when it asks. */
export interface ControlContext {
  /** The lease holder's identity, when one holds it and it has not expired. */
  runner?: string;
  /** What the record says the last run does: an upgrade (`kwave run`) or a rollback (`kwave rollback`). */
  direction?: 'upgrade' | 'rollback';
}

export type ControlDecision =
  | { ok: true; changed: true; state: ControlState; message: string }
  | { ok: true; changed: false; message: string }
  | { ok: false; message: string };

const keepLast = <T>(list: T[], n: number): T[] => (list.length > n ? list.slice(list.length - n) : list);

/**
 * How `request` changes `state`. Pause and resume are idempotent (a second pause changes nothing
 * and says who paused first); abort needs a runner to carry it out.
 */
export function requestControl(state: ControlState, request: ControlRequest, ctx: ControlContext): ControlDecision {
  const logged = (next: Omit<ControlState, 'history'>): ControlState => ({
    ...next,
    history: keepLast([...state.history, request], CONTROL_HISTORY_LIMIT),
  });
  const { paused, abort } = state;
  const who = (r: ControlRequest) => `${r.by} at ${r.at}`;
  switch (request.action) {
    case 'pause':
      if (paused && paused.revision === request.revision)
        return { ok: true, changed: false, message: `already paused by ${who(paused)}` };
      return {
        ok: true,
        changed: true,
        state: logged({ paused: request, ...(abort ? { abort } : {}) }),
        message: ctx.runner
          ? `paused: the runner (${ctx.runner}) starts no new pod; pods in flight finish`
          : 'paused: no runner holds the lease now; a run of this revision will wait until resumed',
      };
    case 'resume':
      if (!paused) return { ok: true, changed: false, message: 'not paused: nothing to resume' };
      return {
        ok: true,
        changed: true,
        state: logged(abort ? { abort } : {}),
        message: ctx.runner ? `resumed: the runner (${ctx.runner}) goes on` : 'resumed: no runner holds the lease now',
      };
    case 'abort': {
      if (!ctx.runner)
        return {
          ok: false,
          message:
            'no runner holds the lease of this plan: nothing to abort (`kwave rollback PLAN` reverts what an earlier run upgraded)',
        };
      if (abort && abort.holder === ctx.runner)
        return {
          ok: true,
          changed: false,
          message: `already aborted by ${who(abort)}; the runner (${ctx.runner}) is halting`,
        };
      const does =
        ctx.direction === 'rollback'
          ? 'stops rolling back: no more pods are reverted, pods in flight finish, it exits 3; run kwave rollback again to finish'
          : "halts and applies the plan's rollback policy";
      return {
        ok: true,
        changed: true,
        state: logged({ abort: { ...request, holder: ctx.runner } }),
        message: `aborted: the runner (${ctx.runner}) ${does}`,
      };
    }
  }
}

/** What a runner of `revision` with identity `self` is told to do by the control state. */
export interface ControlView {
  /** Set while this run must start nothing new. */
  paused?: ControlRequest;
  /** Set once this run must halt. */
  abort?: ControlRequest;
}

export function controlFor(state: ControlState | undefined, revision: string, self: string): ControlView {
  if (!state) return {};
  const paused =
    state.paused && (state.paused.revision === undefined || state.paused.revision === revision)
      ? state.paused
      : undefined;
  const abort = state.abort && state.abort.holder === self ? state.abort : undefined;
  return { ...(paused ? { paused } : {}), ...(abort ? { abort } : {}) };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optString = (v: unknown) => v === undefined || typeof v === 'string';

function isRequest(v: unknown): v is ControlRequest {
  return (
    isObject(v) &&
    (CONTROL_ACTIONS as readonly unknown[]).includes(v.action) &&
    typeof v.by === 'string' &&
    typeof v.at === 'string' &&
    optString(v.revision) &&
    optString(v.holder) &&
    optString(v.user)
  );
}

/** Reads `control.json`; a missing key is no request; a damaged one is reported (and means none). */
export function decodeControl(text: string | undefined): { state: ControlState; problem?: string } {
  if (text === undefined) return { state: emptyControl() };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { state: emptyControl(), problem: `${CONTROL_KEY} is not valid JSON` };
  }
  if (!isObject(doc)) return { state: emptyControl(), problem: `${CONTROL_KEY} is not a JSON object` };
  const history = Array.isArray(doc.history) ? doc.history.filter(isRequest) : [];
  const state: ControlState = { history };
  if (doc.paused !== undefined) {
    if (!isRequest(doc.paused)) return { state: emptyControl(), problem: `${CONTROL_KEY}: paused is not a request` };
    state.paused = doc.paused;
  }
  if (doc.abort !== undefined) {
    if (!isRequest(doc.abort)) return { state: emptyControl(), problem: `${CONTROL_KEY}: abort is not a request` };
    state.abort = doc.abort;
  }
  return { state };
}

export function encodeControl(state: ControlState): string {
  return JSON.stringify(state);
}
