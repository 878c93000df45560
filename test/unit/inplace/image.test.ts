import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { digestOf, normalizeImage, sameImage, sameImageID } from '../../../src/inplace/image.js';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;

describe('normalizeImage', () => {
  const rows: [string, ReturnType<typeof normalizeImage>][] = [
    ['nginx:1.25', { repository: 'docker.io/library/nginx', tag: '1.25' }],
    ['nginx', { repository: 'docker.io/library/nginx', tag: 'latest' }],
    ['team/app:1', { repository: 'docker.io/team/app', tag: '1' }],
    ['index.docker.io/library/nginx:1', { repository: 'docker.io/library/nginx', tag: '1' }],
    ['registry:5000/app:2', { repository: 'registry:5000/app', tag: '2' }],
    ['localhost/app:2', { repository: 'localhost/app', tag: '2' }],
    [`nginx@${A}`, { repository: 'docker.io/library/nginx', digest: A }],
    [`nginx:1.25@${A}`, { repository: 'docker.io/library/nginx', tag: '1.25', digest: A }],
    [`docker-pullable://nginx@${A}`, { repository: 'docker.io/library/nginx', digest: A }],
    [A, { repository: '', digest: A }],
  ];
  for (const [ref, want] of rows) test(ref, () => assert.deepEqual(normalizeImage(ref), want));
});

describe('sameImage', () => {
  const rows: [string, string, boolean][] = [
    ['nginx:1.25.3', 'docker.io/library/nginx:1.25.3', true],
    ['nginx:1.25', 'nginx:1.25.3', false],
    ['nginx:1.14.2', 'nginx:1.14.2-retag', false],
    ['nginx', 'nginx:latest', true],
    [`nginx@${A}`, `docker.io/library/nginx@${A}`, true],
    [`nginx@${A}`, `nginx@${B}`, false],
    [`nginx:1.25@${A}`, 'docker.io/library/nginx:1.25', true],
    [`nginx@${A}`, A, true],
    ['other/nginx:1', 'nginx:1', false],
  ];
  for (const [a, b, want] of rows)
    test(`${a} vs ${b}`, () => {
      assert.equal(sameImage(a, b), want);
      assert.equal(sameImage(b, a), want);
    });
});

test('digestOf finds the digest in every image ID spelling', () => {
  assert.equal(digestOf(`docker.io/library/nginx@${A}`), A);
  assert.equal(digestOf(`docker-pullable://nginx@${A}`), A);
  assert.equal(digestOf(A), A);
  assert.equal(digestOf('nginx:1.25'), undefined);
});

test('sameImageID compares digests across spellings; empty equals only empty', () => {
  assert.equal(sameImageID(`docker.io/library/nginx@${A}`, `docker-pullable://nginx@${A}`), true);
  assert.equal(sameImageID(`docker.io/library/nginx@${A}`, `docker.io/library/nginx@${B}`), false);
  assert.equal(sameImageID('', `nginx@${A}`), false);
  assert.equal(sameImageID('', ''), true);
});
