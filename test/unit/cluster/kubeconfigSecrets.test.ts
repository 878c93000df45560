// A kubeconfig's credentials are never echoed (a malformed file's error quotes no lines of it) and
// never sent over plain http:// unless --insecure-send-credentials-over-http says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '../../../src/cluster/connect.js';
import { KwaveError } from '../../../src/errors.js';

const TOKEN = 'SENTINEL-kubeconfig-4f0c2a9e71';
const KEY = 'U0VOVElORUwta2V5LTdiMWQ=';

function kubeconfig(server: string, user: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: { server: "${server}" }
users:
- name: u
  user:
${user}
contexts:
- name: x
  context: { cluster: c, user: u }
current-context: x
`;
}

describe('kubeconfig secrets', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kwave-kcsecrets-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const refusal = (fn: () => unknown): KwaveError => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof KwaveError && err.exitCode === 2, String(err));
      return err;
    }
    assert.fail('expected a refusal');
  };

  test('a malformed kubeconfig is refused with the place of the error and none of its lines', () => {
    for (const [name, text, where] of [
      ['indent', `users:\n- name: u\n  user:\n    token: ${TOKEN}\n   x: y\n`, /line 5, column 4: bad indentation/],
      [
        'quote',
        `users:\n- name: u\n  user:\n    client-key-data: "${KEY}\n    token: ${TOKEN}\n`,
        /invalid YAML at line \d+/,
      ],
    ] as const) {
      const err = refusal(() => connect({ kubeconfig: write(name, text), env: {} }));
      assert.match(err.message, where);
      assert.match(err.message, /the lines are not shown: a kubeconfig holds credentials/);
      for (const secret of [TOKEN, KEY, 'SENTINEL']) assert.ok(!err.message.includes(secret), err.message);
    }
  });

  test('a token, client key, password or exec plugin over http:// is refused with exit 2', () => {
    for (const user of [
      `    token: ${TOKEN}`,
      `    client-certificate-data: ${KEY}\n    client-key-data: ${KEY}`,
      '    username: admin\n    password: hunter22',
      '    exec: { apiVersion: client.authentication.k8s.io/v1, command: /bin/true }',
    ]) {
      const err = refusal(() =>
        connect({ kubeconfig: write('plain', kubeconfig('http://10.0.0.1:8080', user)), env: {} }),
      );
      assert.match(err.message, /cluster "c" is served over plain http:\/\/ and user "u" has /);
      assert.match(err.message, /--insecure-send-credentials-over-http/);
      assert.ok(!err.message.includes(TOKEN) && !err.message.includes('hunter22'), err.message);
    }
  });

  test('the flag lets it through with a warning; https, or http without credentials, needs no flag', () => {
    const warnings: string[] = [];
    const plain = write('plain-ok', kubeconfig('http://10.0.0.1:8080', `    token: ${TOKEN}`));
    const c = connect({ kubeconfig: plain, env: {}, allowCredentialsOverHttp: true, warn: (m) => warnings.push(m) });
    c.close();
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^warning: cluster "c" is served over plain http:\/\/ .*sent unencrypted/);
    for (const [server, user] of [
      ['https://10.0.0.1:6443', `    token: ${TOKEN}`],
      ['http://10.0.0.1:8080', '    as: nobody'],
    ] as const) {
      const ok = connect({
        kubeconfig: write('fine', kubeconfig(server, user)),
        env: {},
        warn: (m) => warnings.push(m),
      });
      ok.close();
    }
    assert.equal(warnings.length, 1);
  });
});
