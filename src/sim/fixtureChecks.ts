// The checks a fixture's schema cannot make: names that must exist or be unique, images that
// must parse, fields that only some workload kinds take. Pure.
import type { Problem } from './fixtureProblems.js';
import type { Fixture, RawFixture } from './fixtureTypes.js';
import { ImageTable, parseImageRef } from './images.js';

/** What the schema cannot say: names that must exist, be unique, or parse as images. */
export function checkFixture(f: Fixture, raw: RawFixture): Problem[] {
  const problems: Problem[] = [];
  const nodeNames = new Set<string>();
  f.nodes.forEach((n, i) => {
    if (nodeNames.has(n.name))
      problems.push({ path: ['nodes', i, 'name'], message: `node "${n.name}" is declared twice` });
    nodeNames.add(n.name);
    (n.missingImages ?? []).forEach((image, j) => {
      const ref = parseImageRef(image);
      if ('error' in ref)
        problems.push({ path: ['nodes', i, 'missingImages', j], message: `image "${image}": ${ref.error}` });
    });
  });
  if (raw.images) {
    for (const name of Object.keys(raw.images)) {
      const ref = parseImageRef(name);
      if ('error' in ref) problems.push({ path: ['images'], key: name, message: `image "${name}": ${ref.error}` });
      else if (ref.digest)
        problems.push({
          path: ['images'],
          key: name,
          message: `image "${name}": declare images by tag; put the digest in "digest"`,
        });
      const of: string | undefined = raw.images[name]?.digestOf;
      if (of !== undefined && !(of in raw.images))
        problems.push({ path: ['images', name, 'digestOf'], message: `digestOf "${of}" is not in the image table` });
    }
    if (problems.length === 0) {
      try {
        new ImageTable(f.images);
      } catch (err) {
        problems.push({ path: ['images'], message: (err as Error).message });
      }
    }
  }
  const podNames = new Set<string>();
  f.workloads.forEach((w, i) => {
    const containerNames = new Set<string>();
    w.containers.forEach((c, j) => {
      if (containerNames.has(c.name))
        problems.push({
          path: ['workloads', i, 'containers', j, 'name'],
          message: `container "${c.name}" is declared twice`,
        });
      containerNames.add(c.name);
    });
    (w.nodes ?? []).forEach((n, j) => {
      if (!nodeNames.has(n))
        problems.push({ path: ['workloads', i, 'nodes', j], message: `node "${n}" is not declared in nodes` });
    });
    const r = raw.workloads?.[i];
    if (w.kind === 'DaemonSet' && r?.replicas !== undefined)
      problems.push({
        path: ['workloads', i],
        key: 'replicas',
        message: 'a DaemonSet runs one pod per node: leave replicas out (use nodes to choose them)',
      });
    if (w.kind !== 'DaemonSet' && r?.replicas === undefined)
      problems.push({ path: ['workloads', i], message: `workload "${w.name}" needs replicas` });
    if (w.kind !== 'Pods' && w.kind !== undefined && r?.owner !== undefined)
      problems.push({
        path: ['workloads', i],
        key: 'owner',
        message: `a ${w.kind} owns its pods itself: owner is for kind Pods only`,
      });
    if (r?.updateStrategy !== undefined && w.kind !== 'StatefulSet' && w.kind !== 'DaemonSet')
      problems.push({
        path: ['workloads', i],
        key: 'updateStrategy',
        message: `updateStrategy is for a StatefulSet or a DaemonSet, not ${w.kind}`,
      });
    const first = `${w.namespace}/${w.name}-0`;
    if (podNames.has(first))
      problems.push({
        path: ['workloads', i, 'name'],
        message: `workload "${w.name}" in namespace "${w.namespace}" is declared twice`,
      });
    podNames.add(first);
  });
  const pdbNames = new Set<string>();
  (f.podDisruptionBudgets ?? []).forEach((p, i) => {
    const key = `${p.namespace}/${p.name}`;
    if (pdbNames.has(key))
      problems.push({
        path: ['podDisruptionBudgets', i, 'name'],
        message: `PodDisruptionBudget "${p.name}" in namespace "${p.namespace}" is declared twice`,
      });
    pdbNames.add(key);
    const percent = [p.minAvailable, p.maxUnavailable].find(
      (v) => typeof v === 'string' && Number(v.slice(0, -1)) > 100,
    );
    if (percent !== undefined)
      problems.push({
        path: ['podDisruptionBudgets', i, p.minAvailable === percent ? 'minAvailable' : 'maxUnavailable'],
        message: `${String(percent)}: must not be greater than 100%`,
      });
  });
  return problems;
}
