// Checks on a policy/v1 PodDisruptionBudget's spec, as kube-apiserver makes them: minAvailable
// and maxUnavailable are exclusive, each a non-negative integer or a percentage of at most 100%.
import { isObject, type JsonObject } from '../json.js';
import type { FieldError } from '../status.js';

const PERCENT = /^[0-9]+%$/;
const PERCENT_MESSAGE =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
const POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

function intOrPercent(value: unknown, field: string): FieldError[] {
  if (typeof value === 'string') {
    if (!PERCENT.test(value)) return [{ type: 'Invalid', field, value, detail: PERCENT_MESSAGE }];
    return Number(value.slice(0, -1)) > 100
      ? [{ type: 'Invalid', field, value, detail: 'must not be greater than 100%' }]
      : [];
  }
  if (typeof value === 'number' && Number.isInteger(value))
    return value < 0 ? [{ type: 'Invalid', field, value, detail: 'must be greater than or equal to 0' }] : [];
  return [{ type: 'Invalid', field, value, detail: "must be an integer or percentage (e.g '5%')" }];
}

export function validatePdbSpec(pdb: JsonObject): FieldError[] {
  const spec = isObject(pdb.spec) ? pdb.spec : {};
  const errors: FieldError[] = [];
  const has = (k: string) => spec[k] !== undefined && spec[k] !== null;
  if (has('minAvailable') && has('maxUnavailable'))
    errors.push({
      type: 'Invalid',
      field: 'spec',
      value: spec,
      detail: 'minAvailable and maxUnavailable cannot be both set',
    });
  if (has('minAvailable')) errors.push(...intOrPercent(spec.minAvailable, 'spec.minAvailable'));
  if (has('maxUnavailable')) errors.push(...intOrPercent(spec.maxUnavailable, 'spec.maxUnavailable'));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (policy !== undefined && policy !== null && !POLICIES.includes(String(policy))) {
    errors.push({
      type: 'NotSupported',
      field: 'spec.unhealthyPodEvictionPolicy',
      value: policy,
      detail: `supported values: ${POLICIES.map((p) => `"${p}"`).join(', ')}`,
    });
  }
  return errors;
}
