// Where the plan's JSON Schema is and how it is compiled: shared by the build step that
// precompiles it (scripts/build-schema.ts) and by the loader that checks the result is current.
// Imports no library, so loading a plan does not load ajv's compiler.
import { pathToFileURL } from 'node:url';
import { packagePath } from '../packageRoot.js';

/** `schemas/plan.schema.json` of the package, for the sources (tests), the library and the CLI bundle alike. */
export const PLAN_SCHEMA_URL = pathToFileURL(packagePath('schemas', 'plan.schema.json'));

/**
 * Annotation keywords of our own, ignored by editors: `x-expected` says in words what a value must
 * look like (messages use it instead of a regular expression); `x-unknown-hint` adds advice to the
 * "unknown field" message of one object.
 */
export const MESSAGE_KEYWORDS = ['x-expected', 'x-unknown-hint'] as const;

/**
 * ajv's options for the plan schema.
 * - verbose: errors carry the failing value and its schema, which the messages need.
 * - strictRequired off: `oneOf: [{required: [a]}, {required: [b]}]` is how the schema says
 *   "exactly one of a and b", and those branches name properties declared one level up.
 * - allowUnionTypes: pod amounts are `type: [integer, string]` (3 or "10%").
 */
export const AJV_OPTIONS = {
  allErrors: true,
  verbose: true,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
} as const;
