// How hard the fuzz tests push: a small default that keeps `npm test` quick, more with
// KWAVE_FUZZ=long (×50) or an exact KWAVE_FUZZ_RUNS; KWAVE_FUZZ_SEED replays a failure that
// fast-check reported (it prints the seed and the path).
import type { TestContext } from 'node:test';
import fc from 'fast-check';

const LONG = process.env.KWAVE_FUZZ === 'long';

/** The long mode: costly cases (more CLI spawns) run only then. */
export const longFuzz = LONG;

/** Runs of one property: `base` by default. */
export function runs(base: number): number {
  const exact = Number(process.env.KWAVE_FUZZ_RUNS);
  if (Number.isInteger(exact) && exact > 0) return exact;
  return LONG ? base * 50 : base;
}

/** fast-check parameters for a property of `base` runs, and the run count reported in the TAP output. */
export function params<T>(t: TestContext, base: number): fc.Parameters<T> {
  const numRuns = runs(base);
  const seed = process.env.KWAVE_FUZZ_SEED === undefined ? undefined : Number(process.env.KWAVE_FUZZ_SEED);
  t.diagnostic(`fuzz runs: ${numRuns}`);
  return seed === undefined ? { numRuns } : { numRuns, seed };
}

/** Odd strings: control characters, right-to-left marks, combining marks, astral planes, lone surrogates. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u202e',
    'e\u0301\u0301\u0301',
    '\ud800',
    '\udfff',
    '😀'.repeat(30),
    '\r\n',
    '"',
    "'",
    '\\',
    '${x}',
    '%00',
    '../..',
    'a'.repeat(5000),
  ),
);

/** Strings crafted to break out of a query string, a JSON patch, a selector or a path. */
export const injection: fc.Arbitrary<string> = fc.constantFrom(
  'app=web,env!=prod',
  'app in (a,b)',
  'a&labelSelector=x',
  'a?watch=true',
  'a#frag',
  'a%26b',
  'a/../../secrets',
  '{"op":"remove","path":"/metadata"}',
  '"},{"op":"replace","path":"/spec/containers/0/image","value":"evil"}',
  '$patch: replace',
  '$patch',
  'nginx:1.25.3"}],"x":{"',
  'nginx:1.25.3\n',
  'nginx:1.25.3 --privileged',
  'nginx:1.25.3;rm -rf /',
  'a\u0000b',
  '__proto__',
  'constructor',
  '!app',
  'app,',
  '=x',
);
