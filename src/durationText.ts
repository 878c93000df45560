// How kwave shows a duration to people, in one place: `formatDuration` for how long something
// took or has left (status, progress, the messages of gates and of the per-pod flow), and
// `formatAge` for how long ago something happened (a node NotReady since…), in whole seconds as
// kubectl prints ages, so scripts that match `since \d+s` keep working. Plan text has its own
// syntax, written by plan/duration.ts formatPlanDuration (`1m30s`, `1s500ms`: what a plan would
// say); the simulator prints Go's and kubectl's formats (sim/clock.ts goDuration,
// sim/apiserver/table/duration.ts), because it mimics those programs.

/**
 * `850ms`, `2.0s`, `2.5s`, `42s`, `3m05s`, `2h07m`, `3d04h`. Seconds keep one decimal below
 * 10 s (cut, not rounded), where the difference matters (a pod's upgrade, a short pause); longer
 * ones are whole. A negative duration (a time already past) reads `0s`; a value
 * that is not a number, `-`.
 */
export function formatDuration(ms: number): string {
  if (Number.isNaN(ms) || ms === Infinity) return '-';
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const two = (n: number) => String(n).padStart(2, '0');
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${two(s % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${two(m % 60)}m`;
  return `${Math.floor(h / 24)}d${two(h % 24)}h`;
}

/** `12s`, `4m5s`, `2h3m`: an age as kubectl prints one (whole seconds, cut), never negative. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
}
