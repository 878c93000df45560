import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AbortError, ApiException, FetchError } from '@kubernetes/client-node';
import {
  forbiddenMessage,
  KubeError,
  kubeErrorFromResponse,
  kubeErrorToKwave,
  toKubeError,
  withTarget,
  wrapKube,
} from '../../../src/cluster/kubeError.js';
import { KwaveError } from '../../../src/errors.js';

const conflictStatus = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message:
    'Operation cannot be fulfilled on pods "web-0": the object has been modified; please apply your changes to the latest version and try again',
  reason: 'Conflict',
  details: { name: 'web-0', kind: 'pods' },
  code: 409,
});

describe('toKubeError', () => {
  test('reads code, reason and message from an ApiException whose body is a Status in JSON text', () => {
    const e = toKubeError(new ApiException(409, 'Unknown API Status Code!', conflictStatus, {}));
    assert.ok(e instanceof KubeError);
    assert.equal(e.code, 409);
    assert.equal(e.reason, 'Conflict');
    assert.match(e.message, /the object has been modified/);
  });

  test('accepts a Status body already parsed', () => {
    const e = toKubeError(
      new ApiException(404, 'x', { kind: 'Status', reason: 'NotFound', message: 'pods "a" not found', code: 404 }, {}),
    );
    assert.deepEqual([e.code, e.reason, e.message], [404, 'NotFound', 'pods "a" not found']);
  });

  test('falls back to the usual reason when the body is not a Status (e.g. 401 without body)', () => {
    const e = toKubeError(new ApiException(401, 'Unauthorized', undefined, {}));
    assert.deepEqual([e.code, e.reason], [401, 'Unauthorized']);
    const g = toKubeError(new ApiException(502, 'x', '<html>bad gateway</html>', {}));
    assert.deepEqual([g.code, g.reason, g.message], [502, 'BadGateway', 'BadGateway (HTTP 502)']);
  });

  test('reads Retry-After from the headers of a 429', () => {
    const e = toKubeError(
      new ApiException(
        429,
        'x',
        JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'slow down', code: 429 }),
        { 'retry-after': '2' },
      ),
    );
    assert.equal(e.retryAfterSeconds, 2);
  });

  test('or from details.retryAfterSeconds', () => {
    const e = toKubeError(
      new ApiException(429, 'x', JSON.stringify({ reason: 'TooManyRequests', details: { retryAfterSeconds: 4 } }), {}),
    );
    assert.equal(e.retryAfterSeconds, 4);
  });

  test("keeps the reasons of the Status's causes (an admission plugin's own, as kube-apiserver 1.37 sends a refused resize)", () => {
    const body = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'pods "huge-0" is forbidden: node didn\'t have enough allocatable resources: memory, requested: 68719476736, allocatable: 34359738368',
      reason: 'Forbidden',
      details: { name: 'huge-0', kind: 'pods', causes: [{ reason: 'NodeCapacity' }] },
      code: 403,
    });
    const e = toKubeError(new ApiException(403, 'x', body, {}));
    assert.deepEqual([e.code, e.reason, e.causes], [403, 'Forbidden', ['NodeCapacity']]);
    assert.deepEqual(withTarget(e, { verb: 'patch', resource: 'pods/resize', namespace: 'default' }).causes, [
      'NodeCapacity',
    ]);
    assert.deepEqual(toKubeError(new ApiException(409, 'x', conflictStatus, {})).causes, []);
  });

  test("maps the Watch's non-200 error (statusCode)", () => {
    const w = Object.assign(new Error('Gone'), { statusCode: 410 });
    assert.deepEqual([toKubeError(w).code, toKubeError(w).reason], [410, 'Expired']);
  });

  test('maps dropped connections to code 0 with the errno as reason', () => {
    const reset = new FetchError(
      'request to https://127.0.0.1:1/api failed, reason: socket hang up',
      'system',
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    );
    assert.deepEqual([toKubeError(reset).code, toKubeError(reset).reason], [0, 'ECONNRESET']);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    assert.equal(toKubeError(refused).reason, 'ECONNREFUSED');
    assert.equal(toKubeError(new Error('socket hang up')).reason, 'ECONNRESET');
  });

  test('maps an aborted or timed-out request to reason Timeout', () => {
    assert.equal(toKubeError(new AbortError('The operation was aborted.')).reason, 'Timeout');
  });

  test('leaves other errors unclassified (so they are not retried)', () => {
    const e = toKubeError(new TypeError('cannot read x of undefined'));
    assert.deepEqual([e.code, e.reason], [0, 'Unknown']);
    assert.equal(toKubeError('weird').reason, 'Unknown');
  });

  test('is idempotent', () => {
    const e = new KubeError(422, 'Invalid', 'no');
    assert.equal(toKubeError(e), e);
  });
});

test('kubeErrorFromResponse names the code when the body says nothing', () => {
  assert.equal(kubeErrorFromResponse(418, '').reason, 'HTTP418');
});

test('kubeErrorToKwave gives a KwaveError with code KUBE and exit 1', () => {
  const k = kubeErrorToKwave(new KubeError(500, 'InternalError', 'etcd is down'), 'listing pods in web');
  assert.ok(k instanceof KwaveError);
  assert.equal(k.code, 'KUBE');
  assert.equal(k.exitCode, 1);
  assert.equal(k.message, 'listing pods in web: etcd is down (HTTP 500 InternalError)');
});

test('a refusal (403) is exit 2 naming verb, resource and namespace when the request is known', () => {
  const bare = kubeErrorToKwave(new KubeError(403, 'Forbidden', 'pods is forbidden'), 'listing pods in web');
  assert.equal(bare.exitCode, 2);
  assert.equal(bare.message, 'forbidden: pods is forbidden (listing pods in web)');
  const known = withTarget(new KubeError(403, 'Forbidden', 'pods is forbidden'), {
    verb: 'patch',
    resource: 'pods/status',
    namespace: 'default',
  });
  assert.equal(
    kubeErrorToKwave(known, 'closing the gate').message,
    'forbidden: cannot patch pods/status in namespace default — deploy/rbac.yaml grants it (closing the gate)',
  );
  assert.equal(
    withTarget(new KubeError(409, 'Conflict', 'x'), { verb: 'get', resource: 'pods' }).target,
    undefined,
    'only 403s carry the request',
  );
  assert.equal(
    forbiddenMessage({ verb: 'list', resource: 'nodes' }),
    'forbidden: cannot list nodes (cluster-wide) — deploy/rbac.yaml grants it',
  );
});

test('wrapKube turns a KubeError into the KwaveError naming what kwave was doing, and passes the rest', async () => {
  assert.equal(await wrapKube(async () => 7, 'counting'), 7);
  await assert.rejects(
    wrapKube(() => Promise.reject(new KubeError(500, 'InternalError', 'etcd is down')), 'listing pods in web'),
    (err: unknown) =>
      err instanceof KwaveError && err.message === 'listing pods in web: etcd is down (HTTP 500 InternalError)',
  );
  const bug = new TypeError('not a cluster problem');
  await assert.rejects(
    wrapKube(() => Promise.reject(bug), 'listing pods in web'),
    (err: unknown) => err === bug,
  );
});
