// Plans for the unit tests, written as a user writes them (YAML) and loaded by the real loader,
// so a test's plan has every default and check a real one has.
import { loadPlanText } from '../../../src/plan/load.js';
import type { Plan } from '../../../src/plan/types.js';

/** The plan of `text`; throws with the loader's messages when it is not a valid plan. */
export function loadPlan(text: string, file = 'plan.yaml'): Plan {
  const r = loadPlanText(text, file);
  if (!r.ok) throw new Error(r.errors.map((e) => `${e.pos.line}:${e.pos.col} ${e.message}`).join('; '));
  return r.plan;
}

export interface PlanParts {
  /** metadata.name (default `web`); the file is `<name>.yaml`. */
  name?: string;
  /** target.namespace (default `web`), or `namespaces` when given; the selector is always `app: web`. */
  namespace?: string;
  namespaces?: string[];
  /** The image of container `nginx` (default nginx:1.25.3). */
  image?: string;
  /** spec.strategy as YAML (a flow mapping); absent: no strategy, so the defaults. */
  strategy?: string;
  /** spec.failurePolicy as YAML (a flow mapping); absent: the defaults. */
  failurePolicy?: string;
  /** More of spec, as lines indented by two spaces, each ending in a newline. */
  extra?: string;
}

/** The YAML of a one-container plan targeting pods `app: web`. */
export function planText(p: PlanParts = {}): string {
  const fields = [
    p.strategy !== undefined ? `  strategy: ${p.strategy}\n` : '',
    p.failurePolicy !== undefined ? `  failurePolicy: ${p.failurePolicy}\n` : '',
  ].join('');
  return `apiVersion: kwave.dev/v1alpha1
kind: RolloutPlan
metadata: { name: ${p.name ?? 'web'} }
spec:
  target: { ${p.namespaces ? `namespaces: [${p.namespaces.join(', ')}]` : `namespace: ${p.namespace ?? 'web'}`}, selector: { matchLabels: { app: web } } }
  update: { containers: [{ name: nginx, image: "${p.image ?? 'nginx:1.25.3'}" }] }
${fields}${p.extra ?? ''}`;
}

/** The loaded plan of `planText(p)`, from file `<name>.yaml`. */
export function testPlan(p: PlanParts = {}): Plan {
  return loadPlan(planText(p), `${p.name ?? 'web'}.yaml`);
}
