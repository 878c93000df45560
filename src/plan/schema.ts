// The plan's JSON Schema (schemas/plan.schema.json), precompiled at build time by
// scripts/build-schema.ts into schemaValidator.generated.ts: starting a command compiles nothing.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { PLAN_SCHEMA_URL } from './schemaFile.js';
import { SCHEMA_SHA256, validate } from './schemaValidator.generated.js';

export { PLAN_SCHEMA_URL } from './schemaFile.js';

let checked = false;

/** The precompiled validator, once it is known to be built from the schema file beside it. */
export function planValidator(): ValidateFunction {
  if (!checked) {
    const sha = createHash('sha256').update(readFileSync(PLAN_SCHEMA_URL, 'utf8')).digest('hex');
    if (sha !== SCHEMA_SHA256)
      throw new Error(
        `the precompiled plan validator is out of date with ${PLAN_SCHEMA_URL.pathname}: run npm run build`,
      );
    checked = true;
  }
  return validate as ValidateFunction;
}

/** Runs the schema over a plan's JS value; [] when it conforms. */
export function schemaErrors(value: unknown): ErrorObject[] {
  const validator = planValidator();
  return validator(value) ? [] : [...(validator.errors ?? [])];
}
