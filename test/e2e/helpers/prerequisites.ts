// The tools some e2e suites need beyond node (CI installs them all, see .ci/run). A suite passes
// `skip: missing('prometheus')` to each of its tests, never to its describe: node drops a skipped
// describe's tests from the totals, while skipped tests are counted and reported by
// scripts/run-tests.mjs, which fails the run under KWAVE_TEST_NO_SKIPS=1.
import { spawnSync } from 'node:child_process';
import { findOnPath } from '../../../src/cli/prometheusProcess.js';

export type Prerequisite = 'prometheus' | 'prometheus-pushgateway' | 'kubectl' | 'chromium';

/** How each one is installed on Debian, the distribution CI runs on. */
const INSTALL: Record<Prerequisite, string> = {
  prometheus: 'apt-get install prometheus',
  'prometheus-pushgateway': 'apt-get install prometheus-pushgateway',
  kubectl: 'apt-get install kubernetes-client (or any kubectl on PATH)',
  chromium: 'apt-get install --no-install-recommends chromium',
};

function present(tool: Prerequisite): boolean {
  if (tool === 'kubectl') return spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  return findOnPath(tool) !== undefined;
}

/**
 * For `test(name, { skip }, fn)`: false when `tool` is on PATH, else the reason, which starts
 * with run-tests.mjs's "missing prerequisite:" and names the install command.
 */
export function missing(tool: Prerequisite): string | false {
  return present(tool)
    ? false
    : `missing prerequisite: ${tool} is not on PATH; install: ${INSTALL[tool]} (.ci/run installs it)`;
}
