// Image references in plans (src/plan/imageRef.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseImageRef } from '../../../src/plan/imageRef.js';

describe('image references', () => {
  const good: [string, object][] = [
    ['nginx:1.25.3', { path: 'nginx', tag: '1.25.3' }],
    ['library/nginx:latest', { path: 'library/nginx', tag: 'latest' }],
    ['registry.example.com:5000/team/app:v1', { domain: 'registry.example.com:5000', path: 'team/app', tag: 'v1' }],
    ['localhost/app:dev', { domain: 'localhost', path: 'app', tag: 'dev' }],
    ['[::1]:5000/app:1', { domain: '[::1]:5000', path: 'app', tag: '1' }],
    ['ghcr.io/org/my_app__x.y-z:1.0_rc-1', { domain: 'ghcr.io', path: 'org/my_app__x.y-z', tag: '1.0_rc-1' }],
    [`nginx@sha256:${'a'.repeat(64)}`, { path: 'nginx', digest: `sha256:${'a'.repeat(64)}` }],
    [`nginx:1.25@sha256:${'0'.repeat(64)}`, { path: 'nginx', tag: '1.25', digest: `sha256:${'0'.repeat(64)}` }],
    ['Registry.Example.com/app:1', { domain: 'Registry.Example.com', path: 'app', tag: '1' }],
  ];
  for (const [text, ref] of good) {
    test(`valid: ${text}`, () => assert.deepEqual(parseImageRef(text), { ok: true, ref }));
  }
  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['nginx', /no tag or digest/],
    ['Nginx:1', /uppercase/],
    ['team/App:1', /uppercase/],
    ['nginx:', /tag "" is not valid/],
    ['nginx:-x', /tag "-x"/],
    [`nginx:${'a'.repeat(129)}`, /tag/],
    ['nginx@sha256:abc', /digest/],
    [`nginx@sha256:${'A'.repeat(64)}`, /digest/],
    [`nginx@md5:${'a'.repeat(32)}`, /digest/],
    ['nginx 1.25', /whitespace/],
    ['team//app:1', /empty component/],
    ['team/app_:1', /path component "app_"/],
    ['-team/app:1', /path component "-team"/],
    ['registry:port/app:1', /port "port" is not a number/],
    ['reg_istry.com/app:1', /registry host/],
    [`${'a'.repeat(256)}:1`, /256 characters/],
  ];
  for (const [text, reason] of bad) {
    test(`invalid: ${JSON.stringify(text.length > 40 ? text.slice(0, 40) + '…' : text)}`, () => {
      const r = parseImageRef(text);
      assert.equal(r.ok, false);
      if (!r.ok) assert.match(r.reason, reason);
    });
  }
});
