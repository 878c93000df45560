// Pod amounts as plans write them: a whole number of pods, or a share like "10%".
import type { Amount } from './types.js';

const PERCENT = /^([0-9]+(?:\.[0-9]+)?)%$/;

/** 3 → count 3; "10%" → fraction 0.1. Undefined for anything else (the schema has said why). */
export function parseAmount(value: unknown): Amount | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return { kind: 'count', value };
  if (typeof value === 'string') {
    const m = PERCENT.exec(value);
    if (m) return { kind: 'fraction', value: Number(m[1]) / 100 };
  }
  return undefined;
}

export function formatAmount(a: Amount): string {
  return a.kind === 'count' ? String(a.value) : `${+(a.value * 100).toFixed(6)}%`;
}
