// Simulated time: how long the kubelet's steps take. Every duration of the simulated cluster is a
// base figure (as in the fixture) times the time scale, with a seeded jitter so that a run can be
// reproduced exactly by passing the same seed.

import { flatString } from './flatString.js';

let lastSecond = NaN;
let lastText = '';

/**
 * A time as the API server writes it: RFC 3339 in UTC, whole seconds (`2025-03-01T10:00:00Z`).
 * The text of the last second is kept: a busy simulator asks for the same second thousands of times.
 */
export function rfc3339(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second !== lastSecond) {
    lastText = flatString(d.toISOString().replace(/\.\d+Z$/, 'Z')); // an invalid date throws here (toISOString)
    lastSecond = second;
  }
  return lastText;
}

/** Timers and the wall clock, injectable so tests could drive them. */
export interface Clock {
  now(): Date;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => new Date(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // A simulated cluster must not keep a process alive on its own: its servers do that.
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A small, fast, seeded PRNG (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` random hex digits from `random` (container IDs, event name suffixes). */
export function randomHex(random: () => number, n: number): string {
  let out = '';
  while (out.length < n)
    out += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, n);
}

/** Base durations of the kubelet's steps, in milliseconds before scaling. */
export interface Timing {
  /** Image pull, unless the image table gives its own. */
  pullMs: number;
  /** Creating and starting a container once its image is there. */
  startMs: number;
  /** From container start to ready, unless the image gives its own. */
  readyMs: number;
  /** Stopping a container (the pod's deletion, or its spec changing). */
  stopMs: number;
  /** How long a crashing image runs before it exits with code 1. */
  crashMs: number;
  /** ± share of random variation on each of the above (0.2 = ±20%). */
  jitter: number;
}

export const DEFAULT_TIMING: Readonly<Timing> = Object.freeze({
  pullMs: 200,
  startMs: 100,
  readyMs: 200,
  stopMs: 200,
  crashMs: 300,
  jitter: 0.2,
});

/** Turns base durations into timer delays: × time scale, ± jitter from the seeded PRNG. */
export class SimTime {
  constructor(
    readonly timeScale: number,
    readonly jitter: number,
    private readonly random: () => number,
  ) {
    if (!(timeScale > 0) || !Number.isFinite(timeScale))
      throw new RangeError(`timeScale must be a positive number, got ${timeScale}`);
  }

  /** A step's delay: base × scale × (1 ± jitter). */
  step(baseMs: number): number {
    const factor = 1 + this.jitter * (2 * this.random() - 1);
    return Math.max(0, baseMs * this.timeScale * factor);
  }

  /** A delay without jitter (back-offs are exact in the kubelet too). */
  exact(baseMs: number): number {
    return baseMs * this.timeScale;
  }
}

/** Exponential back-off as the kubelet's: 10s, 20s, 40s … capped at 5m; `n` = failures so far (1-based). */
export function backOffMs(n: number, initialMs = 10_000, capMs = 300_000): number {
  return Math.min(capMs, initialMs * 2 ** Math.max(0, n - 1));
}

/** Formats milliseconds as Go's time.Duration prints them: `200ms`, `1.5s`, `1m20s`, `5m0s`, `1h0m0s`. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1) return `${trim((ms * 1000).toFixed(3))}µs`;
  if (ms < 1000) return `${trim(ms.toFixed(6))}ms`;
  const totalSeconds = ms / 1000;
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds - h * 3600) / 60);
  const s = totalSeconds - h * 3600 - m * 60;
  const sec = `${trim(s.toFixed(9))}s`;
  if (h > 0) return `${h}h${m}m${sec}`;
  if (m > 0) return `${m}m${sec}`;
  return sec;
}

function trim(fixed: string): string {
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}
