import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chooseConfigSource } from '../../../src/cluster/configSource.js';
import { connect } from '../../../src/cluster/connect.js';
import { KwaveError } from '../../../src/errors.js';

describe('chooseConfigSource', () => {
  const exists = (files: string[]) => (f: string) => files.includes(f);

  test('the --kubeconfig flag wins, even when the file is missing (so the error names it)', () => {
    assert.deepEqual(
      chooseConfigSource({ flag: '/x/kc', env: { KUBECONFIG: '/y' }, home: '/h', exists: exists(['/y']) }),
      { kind: 'files', paths: ['/x/kc'], from: 'flag' },
    );
  });
  test('then $KUBECONFIG, a list whose missing entries are skipped', () => {
    assert.deepEqual(
      chooseConfigSource({
        env: { KUBECONFIG: '/a::/b:/c' },
        home: '/h',
        exists: exists(['/b', '/c', '/h/.kube/config']),
        delimiter: ':',
      }),
      {
        kind: 'files',
        paths: ['/b', '/c'],
        from: 'KUBECONFIG',
      },
    );
  });
  test('then ~/.kube/config', () => {
    assert.deepEqual(chooseConfigSource({ env: {}, home: '/h', exists: exists(['/h/.kube/config']) }), {
      kind: 'files',
      paths: ['/h/.kube/config'],
      from: 'home',
    });
  });
  test('then the in-cluster service account', () => {
    assert.deepEqual(
      chooseConfigSource({
        env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
        home: '/h',
        exists: exists([]),
      }),
      { kind: 'in-cluster', dir: '/var/run/secrets/kubernetes.io/serviceaccount' },
    );
    assert.deepEqual(
      chooseConfigSource({
        env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443', KWAVE_SERVICEACCOUNT_DIR: '/tmp/sa' },
        home: '/h',
        exists: exists([]),
      }),
      { kind: 'in-cluster', dir: '/tmp/sa' },
    );
  });
  test('$KUBECONFIG naming only missing files does not fall back to ~/.kube/config', () => {
    const s = chooseConfigSource({
      env: { KUBECONFIG: '/gone' },
      home: '/h',
      exists: exists(['/h/.kube/config']),
      delimiter: ':',
    });
    assert.equal(s.kind, 'none');
    assert.ok(s.kind === 'none' && s.tried[0]!.includes('/gone'));
  });
  test('nothing found says what was tried', () => {
    const s = chooseConfigSource({ env: {}, home: '/h', exists: exists([]) });
    assert.deepEqual(s, {
      kind: 'none',
      tried: ['/h/.kube/config', 'in-cluster service account (KUBERNETES_SERVICE_HOST is not set)'],
    });
  });
});

const kubeconfig = (opts: {
  current?: string;
  contexts: { name: string; cluster: string; user: string; namespace?: string }[];
  server?: string;
}) => `apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
    server: ${opts.server ?? 'https://127.0.0.1:6443'}
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: abc
contexts:
${opts.contexts.map((c) => `- name: ${c.name}\n  context:\n    cluster: ${c.cluster}\n    user: ${c.user}${c.namespace ? `\n    namespace: ${c.namespace}` : ''}`).join('\n')}
${opts.current ? `current-context: ${opts.current}` : ''}
`;

describe('connect', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kwave-connect-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const refused = (fn: () => unknown, pattern: RegExp) =>
    assert.throws(
      fn,
      (e: unknown) => e instanceof KwaveError && e.code === 'KUBE' && e.exitCode === 2 && pattern.test(e.message),
    );

  test('uses the current context and its namespace', () => {
    const file = write(
      'a',
      kubeconfig({ current: 'dev', contexts: [{ name: 'dev', cluster: 'sim', user: 'admin', namespace: 'web' }] }),
    );
    const c = connect({ kubeconfig: file, env: {} });
    assert.equal(c.contextName, 'dev');
    assert.equal(c.defaultNamespace, 'web');
    assert.equal(c.server, 'https://127.0.0.1:6443');
    c.close();
  });

  test('--context selects another context; namespace defaults to "default"', () => {
    const file = write(
      'b',
      kubeconfig({
        current: 'dev',
        contexts: [
          { name: 'dev', cluster: 'sim', user: 'admin' },
          { name: 'prod', cluster: 'sim', user: 'admin' },
        ],
      }),
    );
    const c = connect({ kubeconfig: file, context: 'prod', env: {} });
    assert.equal(c.contextName, 'prod');
    assert.equal(c.defaultNamespace, 'default');
    c.close();
  });

  test('an unknown --context is a clear error listing the contexts', () => {
    const file = write('c', kubeconfig({ current: 'dev', contexts: [{ name: 'dev', cluster: 'sim', user: 'admin' }] }));
    refused(
      () => connect({ kubeconfig: file, context: 'nope', env: {} }),
      /context "nope" not found in .*available: dev/,
    );
  });

  test('no current-context asks for --context', () => {
    const file = write('d', kubeconfig({ contexts: [{ name: 'dev', cluster: 'sim', user: 'admin' }] }));
    refused(
      () => connect({ kubeconfig: file, env: {} }),
      /sets no current-context \(available: dev\); pass --context NAME/,
    );
  });

  test('a context naming a missing cluster is refused', () => {
    const file = write(
      'e',
      kubeconfig({ current: 'dev', contexts: [{ name: 'dev', cluster: 'elsewhere', user: 'admin' }] }),
    );
    refused(() => connect({ kubeconfig: file, env: {} }), /refers to cluster "elsewhere"/);
  });

  test('a missing --kubeconfig file is named', () => {
    refused(
      () => connect({ kubeconfig: path.join(dir, 'missing'), env: {} }),
      /cannot read kubeconfig .*missing: file not found/,
    );
  });

  test('no configuration at all', () => {
    refused(
      () => connect({ env: {}, home: path.join(dir, 'nohome') }),
      /no Kubernetes configuration found: tried .*Pass --kubeconfig FILE or set KUBECONFIG/,
    );
  });

  test('$KUBECONFIG files are merged, the first one winning', () => {
    const first = write(
      'f1',
      kubeconfig({ current: 'one', contexts: [{ name: 'one', cluster: 'sim', user: 'admin', namespace: 'first' }] }),
    );
    const second = write(
      'f2',
      kubeconfig({
        current: 'two',
        contexts: [
          { name: 'two', cluster: 'sim', user: 'admin' },
          { name: 'one', cluster: 'sim', user: 'admin', namespace: 'second' },
        ],
      }),
    );
    const c = connect({ env: { KUBECONFIG: `${first}${path.delimiter}${second}` } });
    assert.equal(c.contextName, 'one');
    assert.equal(c.defaultNamespace, 'first');
    c.close();
    const d = connect({ env: { KUBECONFIG: `${first}${path.delimiter}${second}` }, context: 'two' });
    assert.equal(d.contextName, 'two');
    d.close();
  });

  test('~/.kube/config is found', () => {
    const home = path.join(dir, 'home');
    mkdirSync(path.join(home, '.kube'), { recursive: true });
    writeFileSync(
      path.join(home, '.kube', 'config'),
      kubeconfig({ current: 'dev', contexts: [{ name: 'dev', cluster: 'sim', user: 'admin' }] }),
    );
    const c = connect({ env: {}, home });
    assert.equal(c.contextName, 'dev');
    c.close();
  });
});
