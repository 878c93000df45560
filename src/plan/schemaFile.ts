// Where the plan's JSON Schema is and how it is compiled: shared by the build step that
// precompiles it (scripts/build-schema.ts) and by the loader that checks the result is current.
// Imports nothing, so loading a plan does not load ajv's compiler.

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

/**
 * ajv's options for the plan schema.
 * - verbose: errors carry the failing value and its schema, which the messages need.
 * - strictRequired off: `oneOf: [{required: [a]}, {required: [b]}]` is how the schema says
 *   "exactly one of a and b", and those branches name properties declared one level up.
 * - allowUnionTypes: pod amounts are `type: [integer, string]` (3 or "10%").
 */
export const AJV_OPTIONS = { allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true } as const;
