// The plan's JSON Schema (schemas/plan.schema.json), compiled once per process with ajv.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * The schema file sits two folders up from both src/plan/ and dist/plan/, so one relative URL
 * serves the TypeScript sources (tests) and the compiled package alike.
 */
export const PLAN_SCHEMA_URL = new URL('../../schemas/plan.schema.json', import.meta.url);

/**
 * Annotation keywords of our own, ignored by editors: `x-expected` says in words what a value must
 * look like (messages use it instead of a regular expression); `x-unknown-hint` adds advice to the
 * "unknown field" message of one object.
 */
export const MESSAGE_KEYWORDS = ['x-expected', 'x-unknown-hint'] as const;

let validator: ValidateFunction | undefined;

export function planValidator(): ValidateFunction {
  if (!validator) {
    const schema = JSON.parse(readFileSync(PLAN_SCHEMA_URL, 'utf8')) as object;
    // verbose: errors carry the failing value and its schema, which the messages need.
    // strictRequired is off: `oneOf: [{required: [a]}, {required: [b]}]` is how the schema says
    // "exactly one of a and b", and those branches name properties declared one level up.
    // allowUnionTypes: pod amounts are `type: [integer, string]` (3 or "10%").
    const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
    ajv.addVocabulary([...MESSAGE_KEYWORDS]);
    validator = ajv.compile(schema);
  }
  return validator;
}

/** Runs the schema over a plan's JS value; [] when it conforms. */
export function schemaErrors(value: unknown): ErrorObject[] {
  const validate = planValidator();
  return validate(value) ? [] : [...(validate.errors ?? [])];
}
