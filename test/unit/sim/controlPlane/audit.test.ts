import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditTail, parseAuditLine, readAudit, requestKey } from '../../../../src/sim/controlPlane/audit.js';

/** An audit event as kube-apiserver writes it at Metadata level (fields kwave reads). */
function event(
  auditID: string,
  stage: string,
  verb: string,
  user: string,
  ref?: { resource: string; subresource?: string; namespace?: string; name?: string },
  code = 200,
): string {
  return `${JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID,
    stage,
    requestURI: ref ? `/api/v1/namespaces/${ref.namespace ?? 'default'}/${ref.resource}?x=1` : '/readyz',
    verb,
    user: { username: user, groups: ['system:authenticated'] },
    ...(ref ? { objectRef: { apiVersion: 'v1', ...ref } } : {}),
    responseStatus: { metadata: {}, code },
  })}\n`;
}

test('a line becomes a record; anything else is skipped', () => {
  const r = parseAuditLine(
    event('a', 'ResponseComplete', 'patch', 'kwave', {
      resource: 'pods',
      subresource: 'status',
      namespace: 'ns1',
      name: 'p',
    }),
  );
  assert.deepEqual(
    {
      user: r?.user,
      verb: r?.verb,
      resource: r?.resource,
      subresource: r?.subresource,
      namespace: r?.namespace,
      name: r?.name,
      code: r?.code,
      path: r?.path,
    },
    {
      user: 'kwave',
      verb: 'patch',
      resource: 'pods',
      subresource: 'status',
      namespace: 'ns1',
      name: 'p',
      code: 200,
      path: '/api/v1/namespaces/ns1/pods',
    },
  );
  assert.equal(parseAuditLine(''), undefined);
  assert.equal(parseAuditLine('not json'), undefined);
  assert.equal(parseAuditLine('{"kind":"Other"}'), undefined);
});

test('a watch counts once, when it starts; other requests when they complete; non-resource requests are not keyed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwave-audit-'));
  try {
    const path = join(dir, 'audit.log');
    writeFileSync(
      path,
      event('w', 'ResponseStarted', 'watch', 'kwave', { resource: 'pods' }) +
        event('p', 'ResponseComplete', 'patch', 'kwave', { resource: 'pods', subresource: 'status' }) +
        event('q', 'ResponseComplete', 'patch', 'kwave', { resource: 'pods', subresource: 'status' }) +
        event('r', 'ResponseComplete', 'get', 'kwave') +
        event('s', 'ResponseComplete', 'patch', 'kwave-node-agent', { resource: 'pods', subresource: 'status' }) +
        event('w', 'ResponseComplete', 'watch', 'kwave', { resource: 'pods' }),
    );
    const records = readAudit(path);
    assert.equal(records.length, 5);
    // As the real backend's /sim/stats counts them (sim/real/stats.ts), the node agent left out.
    assert.deepEqual(records.filter((r) => r.user !== 'kwave-node-agent').map(requestKey), [
      'watch pods',
      'patch pods/status',
      'patch pods/status',
      undefined,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('AuditTail returns each record once and waits for a half-written line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwave-audit-'));
  try {
    const path = join(dir, 'audit.log');
    const tail = new AuditTail(path);
    assert.deepEqual(tail.read(), [], 'no log yet');
    const line = event('a', 'ResponseComplete', 'create', 'u', { resource: 'events' }, 201);
    appendFileSync(path, event('b', 'ResponseComplete', 'get', 'u', { resource: 'pods' }) + line.slice(0, 20));
    assert.deepEqual(
      tail.read().map((r) => r.auditID),
      ['b'],
    );
    appendFileSync(path, line.slice(20));
    assert.deepEqual(
      tail.read().map((r) => `${r.auditID} ${r.code}`),
      ['a 201'],
    );
    assert.deepEqual(tail.read(), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
