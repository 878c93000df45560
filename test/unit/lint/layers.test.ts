// The layer rule of eslint.config.js: a back-edge import fails lint, an allowed one passes.
// Runs ESLint's own API on snippets linted as if they were files of src/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: process.cwd() });

async function layerErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the layer rule', () => {
  test('plan importing rollout (a back-edge) fails, naming the rule', async () => {
    const errors = await layerErrors(
      'src/plan/backEdge.ts',
      "import type { RolloutEvent } from '../rollout/events.js';\nexport type E = RolloutEvent;\n",
    );
    assert.equal(errors.length, 1);
    assert.match(
      errors[0]!,
      /'\.\.\/rollout\/events\.js' import is restricted .* src\/plan may not import rollout\/: the layer order is in eslint\.config\.js \(LAYERS\)/,
    );
  });

  test('every back-edge the issue found fails again if reintroduced', async () => {
    const backEdges: [string, string][] = [
      ['src/inplace/decide.ts', "export { renderSelector } from '../rollout/labelSelector.js';\n"],
      ['src/plan/cel.ts', "export { compileCondition } from '../gates/conditions.js';\n"],
      ['src/gates/index.ts', "export { KwaveMetrics } from '../metrics/registry.js';\n"],
      ['src/rollout/runner.ts', "export { runGate } from '../gates/index.js';\n"],
      ['src/sim/kubelet.ts', "export { decide } from '../inplace/decide.js';\n"],
      ['src/sim/index.ts', "export { connect } from '../cluster/connect.js';\n"],
      ['src/metrics/server.ts', "export { main } from '../cli/main.js';\n"],
      ['src/index.ts', "export { startSim } from './sim/index.js';\n"],
      ['src/rollout/runner.ts', "export { RecordStore } from '../record/store.js';\n"],
      ['src/errors.ts', "export type { Plan } from './plan/types.js';\n"],
      ['src/session/runPlan.ts', "export { createReporter } from '../cli/output/index.js';\n"],
      ['src/metrics/server.ts', "export { runPlan } from '../session/runPlan.js';\n"],
      ['src/rollout/runner.ts', "export { runPlan } from '../session/runPlan.js';\n"],
      ['src/lease/runLock.ts', "export { recordName } from '../record/record.js';\n"],
      ['src/record/store.ts', "export { RunLock } from '../lease/runLock.js';\n"],
      ['src/index.ts', "export { main } from './cli/main.js';\n"],
    ];
    for (const [file, code] of backEdges) {
      assert.equal((await layerErrors(file, code)).length, 1, `${file}: ${code.trim()} should fail`);
    }
  });

  test('imports down the layers, within a folder and of base files pass', async () => {
    const allowed: [string, string][] = [
      ['src/inplace/decide.ts', "export type { Plan } from '../plan/types.js';\n"],
      ['src/rollout/runner.ts', "export { runPodFlow } from '../inplace/executor.js';\n"],
      ['src/gates/index.ts', "export type { CheckGate } from '../rollout/gateCheck.js';\n"],
      ['src/metrics/registry.ts', "export type { GateCheckResult } from '../gates/types.js';\n"],
      ['src/cli/main.ts', "export { startSim } from '../sim/index.js';\n"],
      ['src/record/store.ts', "export type { RolloutEvent } from '../rollout/events.js';\n"],
      ['src/plan/checks/gates.ts', "export type { Plan } from '../types.js';\n"],
      ['src/sim/fixture.ts', "export { ExitCode } from '../errors.js';\n"],
      ['src/index.ts', "export { runPlan } from './session/runPlan.js';\n"],
      ['src/cli/main.ts', "export { runPlan } from '../session/runPlan.js';\n"],
      ['src/session/openCluster.ts', "export { RunLock } from '../lease/runLock.js';\n"],
      ['src/lease/runLock.ts', "export { KubeError } from '../cluster/kubeError.js';\n"],
    ];
    for (const [file, code] of allowed) assert.deepEqual(await layerErrors(file, code), [], `${file}: ${code.trim()}`);
  });
});
