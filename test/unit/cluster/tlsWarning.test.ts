// A kubeconfig that turns TLS verification off is used (kubectl does too), but never silently:
// connect() warns on every call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../../src/cluster/connect.js';

const kubeconfig = (insecure: boolean) => `apiVersion: v1
kind: Config
clusters:
  - name: prod
    cluster:
      server: https://10.0.0.1:6443
${insecure ? '      insecure-skip-tls-verify: true\n' : '      certificate-authority-data: ""\n'}users:
  - name: me
    user: { token: abc }
contexts:
  - name: prod
    context: { cluster: prod, user: me }
current-context: prod
`;

test('insecure-skip-tls-verify warns on each connect; a verifying kubeconfig does not', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kwave-tls-'));
  try {
    const insecure = join(dir, 'insecure');
    const secure = join(dir, 'secure');
    await writeFile(insecure, kubeconfig(true));
    await writeFile(secure, kubeconfig(false));
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    connect({ kubeconfig: insecure, env: {}, warn }).close();
    connect({ kubeconfig: insecure, env: {}, warn }).close();
    assert.equal(warnings.length, 2);
    assert.match(
      warnings[0]!,
      /TLS verification of the API server is off for cluster "prod" \(insecure-skip-tls-verify/,
    );
    assert.ok(!warnings[0]!.includes('abc'), 'the warning does not show the token');
    connect({ kubeconfig: secure, env: {}, warn }).close();
    assert.equal(warnings.length, 2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
