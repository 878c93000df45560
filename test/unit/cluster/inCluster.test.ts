import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serviceAccountDir, SERVICE_ACCOUNT_DIR } from '../../../src/cluster/configSource.js';
import { inClusterServer, loadInClusterConfig, TokenFileAuth } from '../../../src/cluster/inCluster.js';
import { KwaveError } from '../../../src/errors.js';

describe('in-cluster configuration', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kwave-sa-'));
    writeFileSync(path.join(dir, 'token'), 'first-token\n');
    writeFileSync(path.join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\n');
    writeFileSync(path.join(dir, 'namespace'), 'kwave');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the folder: KWAVE_SERVICEACCOUNT_DIR, else the pod default', () => {
    assert.equal(serviceAccountDir({}), SERVICE_ACCOUNT_DIR);
    assert.equal(serviceAccountDir({ KWAVE_SERVICEACCOUNT_DIR: '/x' }), '/x');
  });

  test('server URL from host and port, IPv6 in brackets', () => {
    assert.equal(inClusterServer('10.0.0.1', '443'), 'https://10.0.0.1:443');
    assert.equal(inClusterServer('fd00::1', '6443'), 'https://[fd00::1]:6443');
  });

  test('builds the context: server, CA file, namespace; sends the token trimmed', async () => {
    const kc = loadInClusterConfig({
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: '6443',
      KWAVE_SERVICEACCOUNT_DIR: dir,
    });
    assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
    assert.equal(kc.getCurrentCluster()?.caFile, path.join(dir, 'ca.crt'));
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'kwave');
    const opts: { headers?: Record<string, string> } = {};
    await kc.applyToHTTPSOptions(opts);
    assert.equal(opts.headers?.Authorization, 'Bearer first-token');
  });

  test('a rotated token file is read again (the kubelet swaps it in by rename)', () => {
    let now = 0;
    const auth = new TokenFileAuth(() => now);
    const file = path.join(dir, 'token');
    assert.equal(auth.current(file), 'first-token');
    writeFileSync(path.join(dir, 'token.new'), 'second-token');
    renameSync(path.join(dir, 'token.new'), file);
    now += 500;
    assert.equal(auth.current(file), 'first-token', 'checked at most once a second');
    now += 600;
    assert.equal(auth.current(file), 'second-token');
  });

  test('missing token or CA: exit 2 naming the file and the override', () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'kwave-sa-empty-'));
    try {
      assert.throws(
        () =>
          loadInClusterConfig({
            KUBERNETES_SERVICE_HOST: 'h',
            KUBERNETES_SERVICE_PORT: '443',
            KWAVE_SERVICEACCOUNT_DIR: empty,
          }),
        (err: unknown) =>
          err instanceof KwaveError &&
          err.exitCode === 2 &&
          err.message.includes(path.join(empty, 'token')) &&
          err.message.includes('KWAVE_SERVICEACCOUNT_DIR'),
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
