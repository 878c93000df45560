// A store and ObjectOps at a fixed time, with the default namespace and every change recorded:
// the world the apiserver unit tests write into.
import { ObjectOps } from '../../../../src/sim/apiserver/objects.js';
import { RESOURCES } from '../../../../src/sim/apiserver/resources.js';
import { Store, type Change } from '../../../../src/sim/store.js';

const NOW = new Date('2025-01-01T00:00:00Z');
export const write = { dryRun: false };

export function objectsWorld() {
  const store = new Store({ now: () => NOW });
  const ops = new ObjectOps(store, () => NOW);
  ops.create(RESOURCES.namespaces, undefined, { metadata: { name: 'default' } }, write);
  const changes: Change[] = [];
  store.subscribe((c) => changes.push(c));
  return { store, ops, changes };
}
