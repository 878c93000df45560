// How long a wait has left, in the per-pod flow's messages: `58s`, `2m`, `2m30s` (whole
// seconds, rounded up, so a wait never reads as over before it is).
export function fmtMs(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
}
