// Which clusters `kwave pause | resume | abort | status | approve` act on: every cluster of a
// multi-cluster plan by default, the one --cluster names, and usage errors (exit 2) that list the
// plan's clusters for an unknown name, --cluster on a plan of one cluster, or --context on a plan
// that names its clusters' contexts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseClusters } from '../../../src/cli/clusterChoice.js';
import { ExitCode, KwaveError } from '../../../src/errors.js';

const multi = {
  name: 'web',
  clusters: {
    order: 'sequential' as const,
    list: [
      { name: 'eu-1', context: 'ctx-eu' },
      { name: 'us-1', context: 'ctx-us' },
    ],
  },
};
const single = { name: 'web', clusters: undefined };

function usage(f: () => unknown, message: RegExp): void {
  assert.throws(
    f,
    (err: unknown) =>
      err instanceof KwaveError &&
      err.code === 'USAGE' &&
      err.exitCode === ExitCode.BAD_INPUT &&
      message.test(err.message),
  );
}

describe('chooseClusters', () => {
  test('a multi-cluster plan: every cluster, in the plan order, by default', () => {
    assert.deepEqual(chooseClusters(multi, {}), [
      { name: 'eu-1', context: 'ctx-eu' },
      { name: 'us-1', context: 'ctx-us' },
    ]);
  });
  test('--cluster NAME: that one', () => {
    assert.deepEqual(chooseClusters(multi, { cluster: 'us-1' }), [{ name: 'us-1', context: 'ctx-us' }]);
  });
  test("an unknown name is refused, naming the plan's clusters", () => {
    usage(
      () => chooseClusters(multi, { cluster: 'ap-1' }),
      /^--cluster: plan web has no cluster "ap-1" \(its clusters: eu-1, us-1\)$/,
    );
  });
  test('--context on a multi-cluster plan is refused (the plan names the contexts)', () => {
    usage(
      () => chooseClusters(multi, { context: 'ctx-eu' }),
      /^--context: plan web names its clusters' contexts \(spec\.clusters: eu-1, us-1\); pass --cluster NAME instead$/,
    );
  });
  test('a plan of one cluster: the --context given (or the current one); --cluster is refused', () => {
    assert.deepEqual(chooseClusters(single, { context: 'kind' }), [{ name: undefined, context: 'kind' }]);
    assert.deepEqual(chooseClusters(single, {}), [{ name: undefined, context: undefined }]);
    usage(
      () => chooseClusters(single, { cluster: 'eu-1' }),
      /^--cluster: plan web lists no clusters \(spec\.clusters\); use --context/,
    );
  });
});
