// Checks on metadata every resource shares: the object's name on create, label and annotation
// keys and values.
import type { FieldError } from '../status.js';
import { dns1123LabelError, dns1123SubdomainError, labelValueError, qualifiedNameError } from './names.js';

export function validateName(
  name: string | undefined,
  generateName: string | undefined,
  nameRule: 'subdomain' | 'label',
): FieldError[] {
  if (!name) {
    return generateName
      ? []
      : [{ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' }];
  }
  const err = nameRule === 'label' ? dns1123LabelError(name) : dns1123SubdomainError(name);
  return err ? [{ type: 'Invalid', field: 'metadata.name', value: name, detail: err }] : [];
}

export function validateLabelsAndAnnotations(meta: { labels?: unknown; annotations?: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  const labels = (meta.labels ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(labels)) {
    const keyErr = qualifiedNameError(k);
    if (keyErr) errors.push({ type: 'Invalid', field: 'metadata.labels', value: k, detail: keyErr });
    if (typeof v !== 'string')
      errors.push({ type: 'Invalid', field: `metadata.labels`, value: v, detail: 'must be a string' });
    else {
      const valueErr = labelValueError(v);
      if (valueErr) errors.push({ type: 'Invalid', field: 'metadata.labels', value: v, detail: valueErr });
    }
  }
  const annotations = (meta.annotations ?? {}) as Record<string, unknown>;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    const keyErr = qualifiedNameError(k.toLowerCase());
    if (keyErr) errors.push({ type: 'Invalid', field: 'metadata.annotations', value: k, detail: keyErr });
    if (typeof v !== 'string')
      errors.push({ type: 'Invalid', field: `metadata.annotations`, value: v, detail: 'must be a string' });
    size += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (size > 256 * 1024)
    errors.push({ type: 'TooLong', field: 'metadata.annotations', detail: 'may not be more than 262144 bytes' });
  return errors;
}
