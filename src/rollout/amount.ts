// Turning a plan Amount ("3", "10%") into a whole number of pods.
import type { Amount } from '../plan/types.js';

/**
 * How far a product may sit from a whole number and still count as that number.
 *
 * Fractions are binary floating point, so `0.1 × 30` is `3.0000000000000004` and `0.29 × 100` is
 * `28.999999999999996`. Rounded blindly, "10% of 30" would become 4 pods (ceil) and "29% of 100"
 * 28 pods (floor). Snapping to the nearest integer first gives the 3 and 29 a person expects.
 */
const SNAP = 1e-9;

/** `x` if it is not within floating-point noise of an integer, else that integer. */
export function snapToInteger(x: number): number {
  const nearest = Math.round(x);
  return Math.abs(x - nearest) <= SNAP * Math.max(1, Math.abs(x)) ? nearest + 0 : x; // + 0 turns -0 into 0
}

/**
 * Pods meant by `amount` out of `total`. A count is taken as written; a fraction is
 * `fraction × total`, rounded `up` (wave targets: "10%" of 25 = 2.5 → 3) or `down`
 * (budgets and failure limits: "10%" of 25 = 2.5 → 2). Never negative. Callers apply their own
 * floors and caps (a budget is at least 1, a wave target at most `total`).
 */
export function resolveAmount(amount: Amount, total: number, rounding: 'up' | 'down'): number {
  if (amount.kind === 'count') return Math.max(0, Math.floor(amount.value));
  const exact = snapToInteger(amount.value * total);
  return Math.max(0, rounding === 'up' ? Math.ceil(exact) : Math.floor(exact));
}
