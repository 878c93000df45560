// Flat config: typescript-eslint's recommended rules over the TypeScript sources, and the layer
// order of src/ (see LAYERS below and docs/architecture.md).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Which folders of src/ each folder may import (besides itself and the base files at the top of
 * src/, such as errors.ts). Lower layers first; an import the table does not allow is an error.
 *
 *   cluster   the HTTP client of the API server            → (base only)
 *   sim       the simulated cluster, beside kwave: it is what kwave talks to, never part of it
 *   plan      the plan: parse, validate, normalise         → (base only)
 *   inplace   one pod's flow                               → plan, cluster
 *   rollout   the fleet: selection, waves, budget, runner  → inplace, plan, cluster
 *   gates     checks between waves, plugged into rollout   → rollout, inplace, plan, cluster
 *   record    the rollout record and its control requests  → rollout, inplace, plan, cluster
 *   lease     the plan's Lease: one runner at a time       → cluster
 *   notify    notifications of rollout events (spec.notify) → gates, rollout, plan
 *   metrics   Prometheus metrics fed by rollout events     → notify, gates, rollout, inplace, plan, cluster
 *   session   a rollout assembled and run: runPlan         → metrics, notify, lease, record, gates, rollout,
 *             (permissions, lease, PDBs, nodes, pre-pull,     inplace, plan, cluster
 *             owners, record, pause/abort, the assessment)
 *   dashboard `kwave dashboard`: the view model of the        → session, metrics, lease, record, rollout,
 *             rollouts, its HTTP server and page feed          inplace, plan, cluster
 *   cli       the kwave command: commands, output, views   → everything
 *
 * Nothing imports cli; only cli and dashboard import session; src/index.ts (the library) imports session but
 * neither cli nor sim.
 */
export const LAYERS = {
  cluster: [],
  sim: [],
  plan: [],
  inplace: ['plan', 'cluster'],
  rollout: ['inplace', 'plan', 'cluster'],
  gates: ['rollout', 'inplace', 'plan', 'cluster'],
  record: ['rollout', 'inplace', 'plan', 'cluster'],
  lease: ['cluster'],
  notify: ['gates', 'rollout', 'plan'],
  metrics: ['notify', 'gates', 'rollout', 'inplace', 'plan', 'cluster'],
  session: ['metrics', 'notify', 'lease', 'record', 'gates', 'rollout', 'inplace', 'plan', 'cluster'],
  dashboard: ['session', 'metrics', 'lease', 'record', 'rollout', 'inplace', 'plan', 'cluster'],
  cli: [
    'dashboard',
    'session',
    'metrics',
    'notify',
    'lease',
    'record',
    'gates',
    'rollout',
    'inplace',
    'plan',
    'cluster',
    'sim',
  ],
};
const FOLDERS = Object.keys(LAYERS);

/** A no-restricted-imports rule forbidding every folder of `forbidden`, with a message naming the rule. */
function layerRule(from, forbidden) {
  return {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbidden.map((folder) => ({
          group: [`**/${folder}/**`, `**/${folder}`],
          message: `${from} may not import ${folder}/: the layer order is in eslint.config.js (LAYERS)`,
        })),
      },
    ],
  };
}

const layerConfigs = [
  ...FOLDERS.map((folder) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: layerRule(
      `src/${folder}`,
      FOLDERS.filter((f) => f !== folder && !LAYERS[folder].includes(f)),
    ),
  })),
  // Base files (errors.ts and the like) import no folder; the library entry point neither cli nor sim.
  { files: ['src/*.ts'], ignores: ['src/index.ts'], rules: layerRule('a base file of src/', FOLDERS) },
  { files: ['src/index.ts'], rules: layerRule('src/index.ts', ['cli', 'sim']) },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'src/**/*.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        AbortController: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The dashboard's page scripts run in the browser, loaded by <script> tags (no modules, no build).
  {
    files: ['assets/dashboard/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        getComputedStyle: 'readonly',
        devicePixelRatio: 'readonly',
        EventSource: 'readonly',
        uPlot: 'readonly',
        kwaveGateChart: 'readonly',
      },
    },
  },
  ...layerConfigs,
);
