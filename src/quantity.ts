// Kubernetes resource quantities (`250m`, `0.5`, `128Mi`, `1G`, `1e3`) as numbers, to compare
// a plan's target with what a pod asks for and what its kubelet reports: `100m` and `0.1` are
// the same CPU, `1Gi` and `1024Mi` the same memory; the simulator's API server and kubelet read
// quantities with it too. Pure.

const SUFFIX: Readonly<Record<string, number>> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY =
  /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/;

/** The quantity's value (cores for CPU, bytes for memory); undefined when it is not a quantity. */
export function parseQuantity(text: string): number | undefined {
  const m = QUANTITY.exec(text.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2].slice(1));
  // Scaled in integers where it can be: 0.1 * 1e3 is not exactly 100.
  const scale = SUFFIX[m[3] ?? ''] as number;
  return scale < 1 ? base / (1 / scale) : base * scale;
}

/**
 * Whether two quantities are the same amount. The kubelet rounds CPU to whole millicores (and
 * reports it so): `0.1` and `100m` are equal, `100.4m` and `100m` too.
 */
export function sameQuantity(a: string | undefined, b: string | undefined, resource: 'cpu' | 'memory'): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (x === undefined || y === undefined) return a === b;
  return resource === 'cpu' ? Math.ceil(x * 1000 - 1e-9) === Math.ceil(y * 1000 - 1e-9) : x === y;
}
