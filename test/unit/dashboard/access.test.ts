// Who may use the dashboard's server: a loopback Host on a loopback server, the printed token
// beyond loopback (in the URL once, then a cookie), and the page's CSRF token on every action.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAccess, csrfMatches, isLoopback, tokenCookie, TOKEN_COOKIE } from '../../../src/dashboard/access.js';

const loopback = { csrf: 'c5rf', port: 8080 };
const exposed = { ...loopback, token: 's3cret-token' };

test('loopback: a loopback Host naming the port is let in; any other Host is refused (DNS rebinding)', () => {
  for (const host of ['127.0.0.1:8080', 'localhost:8080', '[::1]:8080'])
    assert.equal(checkAccess(loopback, { host }).kind, 'allowed', host);
  for (const host of ['evil.example:8080', '127.0.0.1:9999', undefined]) {
    const d = checkAccess(loopback, host ? { host } : {});
    assert.equal(d.kind, 'denied', String(host));
    assert.equal(d.kind === 'denied' && d.status, 403);
  }
});

test('beyond loopback: the token from the URL becomes a cookie; the cookie or a bearer header lets in; nothing else', () => {
  assert.equal(checkAccess(exposed, { host: 'box:8080', queryToken: 's3cret-token' }).kind, 'set-cookie');
  const cookie = tokenCookie('s3cret-token').split(';')[0]!;
  assert.equal(checkAccess(exposed, { host: 'box:8080', cookie: `a=b; ${cookie}` }).kind, 'allowed');
  assert.equal(checkAccess(exposed, { authorization: 'Bearer s3cret-token' }).kind, 'allowed');
  for (const facts of [
    {},
    { queryToken: 's3cret' },
    { cookie: `${TOKEN_COOKIE}=wrong` },
    { authorization: 'Bearer x' },
  ]) {
    const d = checkAccess(exposed, { host: 'box:8080', ...facts });
    assert.equal(d.kind === 'denied' && d.status, 401, JSON.stringify(facts));
  }
  assert.match(tokenCookie('t'), /HttpOnly; SameSite=Strict/);
});

test('actions need the CSRF token exactly', () => {
  assert.equal(csrfMatches(loopback, 'c5rf'), true);
  assert.equal(csrfMatches(loopback, 'c5r'), false);
  assert.equal(csrfMatches(loopback, undefined), false);
});

test('loopback addresses', () => {
  assert.deepEqual(
    ['127.0.0.1', '127.1.2.3', '::1', 'localhost', '0.0.0.0', '10.0.0.1', 'example.com'].map(isLoopback),
    [true, true, true, true, false, false, false],
  );
});
