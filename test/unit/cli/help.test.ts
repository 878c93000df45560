// Every command's --help lists only the common flags it acts on (the others are accepted, so one
// set of flags works with any command, but not shown).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../../src/cli/main.js';

async function help(command: string): Promise<string> {
  let out = '';
  const io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (out += s) }, env: {} };
  assert.equal(await main([command, '--help'], io), 0);
  return out;
}

const CLUSTER = ['--kubeconfig', '--context'];
const METRICS = ['--metrics-address', '--pushgateway'];

const HONOURED: Record<string, string[]> = {
  validate: [],
  plan: CLUSTER,
  run: [...CLUSTER, ...METRICS],
  status: CLUSTER,
  approve: CLUSTER,
  rollback: [...CLUSTER, ...METRICS],
  adopt: CLUSTER,
  sim: [],
  demo: METRICS,
};

describe('kwave COMMAND --help', () => {
  for (const [command, shown] of Object.entries(HONOURED)) {
    test(`${command} lists -o and ${shown.length ? shown.join(', ') : 'no other common flag'}`, async () => {
      const text = await help(command);
      assert.match(text, /-o, --output/);
      for (const flag of [...CLUSTER, ...METRICS]) {
        assert.equal(
          new RegExp(`${flag} `).test(text),
          shown.includes(flag),
          `${command} --help ${shown.includes(flag) ? 'lacks' : 'lists'} ${flag}`,
        );
      }
    });
  }

  test('a common flag a command does not list is still accepted', async () => {
    let err = '';
    const io = { stdout: { write: () => true }, stderr: { write: (s: string) => (err += s) }, env: {} };
    // validate of a missing file: exit 2 for the file, not for an unknown option.
    assert.equal(await main(['validate', 'no-such-plan.yaml', '--kubeconfig', 'k', '--metrics-address', 'off'], io), 2);
    assert.doesNotMatch(err, /unknown option/);
  });
});
