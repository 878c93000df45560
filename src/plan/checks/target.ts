// spec.target: the selector must select something specific, in valid Kubernetes label syntax.
import { LABEL_KEY_EXPECTED, LABEL_VALUE_EXPECTED, labelKeyProblem, labelValueProblem } from '../k8sNames.js';
import type { DeepPartial, RawSpec } from '../raw.js';
import type { CheckContext } from './context.js';

export function checkTarget(ctx: CheckContext, target: DeepPartial<RawSpec['target']> | undefined): void {
  const selector = target?.selector;
  const at = ['spec', 'target', 'selector'];
  if (typeof selector !== 'object' || selector === null || !ctx.accepted(at)) return;

  const labels = ctx.accepted([...at, 'matchLabels']) ? (selector.matchLabels ?? {}) : {};
  const expressions = ctx.accepted([...at, 'matchExpressions']) ? (selector.matchExpressions ?? []) : [];
  if (Object.keys(labels).length === 0 && expressions.length === 0 && ctx.wholly(at)) {
    ctx.add(
      at,
      'expected at least one label in matchLabels or matchExpressions, found an empty selector (it would select every pod)',
    );
    return;
  }

  for (const [key, value] of Object.entries(labels)) {
    const path = [...at, 'matchLabels', key];
    const keyProblem = labelKeyProblem(key);
    if (keyProblem) ctx.add(path, `expected ${LABEL_KEY_EXPECTED}, found ${keyProblem}`, { anchor: 'key' });
    if (typeof value === 'string' && ctx.accepted(path)) {
      const valueProblem = labelValueProblem(value);
      if (valueProblem) ctx.add(path, `expected ${LABEL_VALUE_EXPECTED}, found ${valueProblem}`);
    }
  }

  expressions.forEach((expr, i) => {
    const path = [...at, 'matchExpressions', i];
    if (!ctx.wholly(path) || typeof expr !== 'object' || expr === null) return;
    if (typeof expr.key === 'string') {
      const keyProblem = labelKeyProblem(expr.key);
      if (keyProblem) ctx.add([...path, 'key'], `expected ${LABEL_KEY_EXPECTED}, found ${keyProblem}`);
    }
    const values = expr.values ?? [];
    const needsValues = expr.operator === 'In' || expr.operator === 'NotIn';
    if (needsValues && values.length === 0) {
      ctx.add(expr.values ? [...path, 'values'] : path, `expected values for operator ${expr.operator}, found none`, {
        code: expr.values ? 'PLAN_INVALID_VALUE' : 'PLAN_MISSING_FIELD',
      });
    }
    // Without an operator (reported by the schema) nothing can be said about the values.
    if (!needsValues && expr.values !== undefined && expr.operator !== undefined) {
      ctx.add(
        [...path, 'values'],
        `expected no values for operator ${String(expr.operator)}, found ${values.length === 0 ? 'an empty list' : 'a list'}`,
        { code: 'PLAN_CONFLICT', anchor: 'key' },
      );
    }
    values.forEach((v, j) => {
      if (typeof v !== 'string') return;
      const problem = labelValueProblem(v);
      if (problem) ctx.add([...path, 'values', j], `expected ${LABEL_VALUE_EXPECTED}, found ${problem}`);
    });
  });
}
