// Kubernetes names and labels in plans (src/plan/k8sNames.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dnsLabelProblem, labelKeyProblem, labelValueProblem } from '../../../src/plan/k8sNames.js';

describe('Kubernetes names', () => {
  test('DNS-1123 labels', () => {
    for (const ok of ['web', 'a', 'web-1', '0abc', 'a'.repeat(63)]) assert.equal(dnsLabelProblem(ok), undefined, ok);
    for (const bad of ['Web', 'web_1', '-web', 'web-', 'a.b', '', 'a'.repeat(64)])
      assert.notEqual(dnsLabelProblem(bad), undefined, bad);
  });
  test('label keys', () => {
    for (const ok of ['app', 'app.kubernetes.io/name', 'A_b.c-D', 'example.com/x', 'a'.repeat(63)])
      assert.equal(labelKeyProblem(ok), undefined, ok);
    for (const bad of [
      '-app',
      'app-',
      '/app',
      'Example.com/app',
      'a/b/c',
      'app.kubernetes.io/',
      'a'.repeat(64),
      'has space',
    ]) {
      assert.notEqual(labelKeyProblem(bad), undefined, bad);
    }
  });
  test('label values', () => {
    for (const ok of ['', 'web', 'v1.2_3-x', 'A'.repeat(63)]) assert.equal(labelValueProblem(ok), undefined, ok);
    for (const bad of ['front end', '-x', 'x.', 'a'.repeat(64), 'a/b'])
      assert.notEqual(labelValueProblem(bad), undefined, bad);
  });
});
