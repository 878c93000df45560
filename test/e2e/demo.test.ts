// The quick start's `npm run demo` (`kwave demo`): the simulated cluster, plans/demo.yaml end to
// end, exit 0, and the proof read from the cluster.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { CHILD_LIMITS, ROOT } from './helpers/kwaveBin.js';
import { embeddedOnly } from './helpers/backend.js';

describe('kwave demo', { skip: embeddedOnly('kwave demo always starts the embedded simulator') }, () => {
  test('upgrades the 60 pods in 4 waves, exits 0 and shows the ImageID proof', async () => {
    const child = spawn(process.execPath, ['bin/kwave.js', 'demo'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...CHILD_LIMITS });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, out);
    assert.match(out, /Completed in .*: completed: 60 pods upgraded/);
    assert.match(out, /^total\s+60\s+60\s+0\s+0\s/m, 'the summary table counts all 60 upgraded');
    assert.match(out, /proof: 60\/60 pods run imageID nginx@sha256:[0-9a-f]{12}… \(nginx:1\.25\.3\)/);
    assert.match(out, /container restarts of the upgraded pods: 1 /);
    assert.match(out, /60\/60 pods are the same pods as before/);
  });
});
