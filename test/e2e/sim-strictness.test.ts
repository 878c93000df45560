// The simulated kube-apiserver is as strict as the real one where kwave writes (docs/sim-api.md,
// "Pods: what may change"):
// pod status is decoded into its type (wrong JSON types and bad times refused, unknown fields
// dropped, metav1.Time cut to whole seconds) and a changed uid is refused, not restored. Every
// request goes over HTTPS with the kubeconfig's token, and every claim is read back through the
// API, so the same file can run against a real server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { startApiOnly, type ApiOnly } from './helpers/apiOnly.js';

interface Reply {
  code: number;
  body: {
    kind?: string;
    reason?: string;
    message?: string;
    code?: number;
    details?: { causes?: { field?: string; message?: string }[] };
  } & Record<string, unknown>;
}

const SMP = 'application/strategic-merge-patch+json';
const MERGE = 'application/merge-patch+json';

describe('simulated kube-apiserver: typed decoding and immutable fields', () => {
  let api: ApiOnly;
  /** Where and how to reach the server, taken from the kubeconfig a user would be handed. */
  let server: { url: string; ca: string; token: string };

  const send = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
    new Promise<Reply>((resolve, reject) => {
      const req = request(
        `${server.url}${path}`,
        {
          method,
          ca: server.ca,
          headers: { authorization: `Bearer ${server.token}`, 'content-type': contentType, accept: 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += String(d)));
          res.on('end', () => resolve({ code: res.statusCode ?? 0, body: JSON.parse(text) as Reply['body'] }));
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  const podPath = (name: string) => `/api/v1/namespaces/default/pods/${name}`;
  const read = async (name: string) => {
    const r = await send('GET', podPath(name));
    assert.equal(r.code, 200, JSON.stringify(r.body));
    return r.body as unknown as {
      metadata: { uid: string; resourceVersion: string; creationTimestamp: string };
      status: Record<string, unknown> & { conditions: Record<string, unknown>[] };
    };
  };
  /** Each test its own pod, so no test depends on another's writes. */
  let n = 0;
  const freshPod = async () => {
    const name = `strict-${n++}`;
    await api.putRunningPod(name);
    return name;
  };

  before(async () => {
    api = await startApiOnly();
    const cluster = api.kc.getCurrentCluster();
    const user = api.kc.getCurrentUser();
    assert.ok(cluster?.caData && user?.token, 'the kubeconfig names a CA and a token');
    server = { url: cluster.server, ca: Buffer.from(cluster.caData, 'base64').toString(), token: user.token };
  });
  after(async () => {
    await api.close();
  });

  test('a condition status of JSON true (not "True") on pods/status: 422 on the field `patch`, nothing written', async () => {
    const name = await freshPod();
    const before = await read(name);
    const r = await send(
      'PATCH',
      `${podPath(name)}/status`,
      { status: { conditions: [{ type: 'kwave.dev/in-place-ready', status: true }] } },
      SMP,
    );
    assert.equal(r.code, 422, JSON.stringify(r.body));
    assert.equal(r.body.reason, 'Invalid');
    assert.deepEqual(r.body.details, {
      causes: [
        {
          reason: 'FieldValueInvalid',
          field: 'patch',
          message:
            'Invalid value: "map[status:map[conditions:[map[status:true type:kwave.dev/in-place-ready]]]]": unrecognized type: string',
        },
      ],
    });
    // A strategic merge patch is merged as a map and then converted: the patch is shown, in Go's map notation.
    assert.equal(
      r.body.message,
      ' "" is invalid: patch: Invalid value: "map[status:map[conditions:[map[status:true type:kwave.dev/in-place-ready]]]]": unrecognized type: string',
    );
    assert.equal((await read(name)).metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was written');
  });

  test('a lastTransitionTime of "garbage": refused (422 by merge patch, 400 by PUT), nothing written', async () => {
    const name = await freshPod();
    const before = await read(name);
    const garbage = { type: 'kwave.dev/in-place-ready', status: 'False', lastTransitionTime: 'garbage' };
    const patched = await send('PATCH', `${podPath(name)}/status`, { status: { conditions: [garbage] } }, MERGE);
    assert.equal(patched.code, 422, JSON.stringify(patched.body));
    assert.equal(patched.body.reason, 'Invalid');
    // A merge patch is applied to the object's JSON and then decoded: the patched object is shown.
    assert.match(
      patched.body.message ?? '',
      /^ "" is invalid: patch: Invalid value: "\{.*\\"name\\":\\"strict-\d+\\".*\}": parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"$/,
    );
    const replaced = await send('PUT', `${podPath(name)}/status`, {
      ...before,
      status: { ...before.status, conditions: [garbage] },
    });
    assert.equal(replaced.code, 400, JSON.stringify(replaced.body));
    assert.equal(replaced.body.reason, 'BadRequest');
    assert.equal(
      replaced.body.message,
      'Pod in version "v1" cannot be handled as a Pod: parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"',
    );
    assert.equal((await read(name)).metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was written');
  });

  test("times Go cannot parse as RFC 3339 are refused with Go's own words (400 by PUT), nothing written", async () => {
    const name = await freshPod();
    const before = await read(name);
    const layout = '"2006-01-02T15:04:05Z07:00"';
    const cases: [string, string][] = [
      ['2026-13-01T00:00:00Z', 'parsing time "2026-13-01T00:00:00Z": month out of range'],
      ['2026-02-30T00:00:00Z', 'parsing time "2026-02-30T00:00:00Z": day out of range'],
      ['2026-01-01T00:00:00', `parsing time "2026-01-01T00:00:00" as ${layout}: cannot parse "" as "Z07:00"`],
      ['2026-01-01 00:00:00Z', `parsing time "2026-01-01 00:00:00Z" as ${layout}: cannot parse " 00:00:00Z" as "T"`],
      ['2026-01-01T00:00:00Zx', 'parsing time "2026-01-01T00:00:00Zx": extra text: "x"'],
    ];
    for (const [time, words] of cases) {
      const condition = { type: 'kwave.dev/in-place-ready', status: 'False', lastTransitionTime: time };
      const r = await send('PUT', `${podPath(name)}/status`, {
        ...before,
        status: { ...before.status, conditions: [condition] },
      });
      assert.deepEqual(
        { code: r.code, reason: r.body.reason, message: r.body.message },
        { code: 400, reason: 'BadRequest', message: `Pod in version "v1" cannot be handled as a Pod: ${words}` },
        time,
      );
    }
    assert.equal((await read(name)).metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was written');
  });

  test('a restartCount of "1" (a string where an integer belongs): 422', async () => {
    const name = await freshPod();
    const before = await read(name);
    const statuses = (before.status.containerStatuses as Record<string, unknown>[]).map((c) => ({
      ...c,
      restartCount: '1',
    }));
    const r = await send('PATCH', `${podPath(name)}/status`, { status: { containerStatuses: statuses } }, MERGE);
    assert.equal(r.code, 422, JSON.stringify(r.body));
    assert.equal(r.body.reason, 'Invalid');
    assert.equal(r.body.details?.causes?.[0]?.field, 'patch');
    assert.match(
      r.body.message ?? '',
      /^ "" is invalid: patch: Invalid value: "\{.*\\"restartCount\\":\\"1\\".*\}": json: cannot unmarshal string into Go struct field ContainerStatus\.status\.containerStatuses\.restartCount of type int32$/,
    );
    assert.equal((await read(name)).metadata.resourceVersion, before.metadata.resourceVersion, 'nothing was written');
  });

  test('fields the status type does not have are dropped, the known ones kept', async () => {
    const name = await freshPod();
    const r = await send(
      'PATCH',
      `${podPath(name)}/status`,
      {
        status: {
          madeUp: 'x',
          conditions: [{ type: 'kwave.dev/in-place-ready', status: 'False', reason: 'R', extra: 1 }],
        },
      },
      SMP,
    );
    assert.equal(r.code, 200, JSON.stringify(r.body));
    const pod = await read(name);
    assert.equal('madeUp' in pod.status, false);
    const gate = pod.status.conditions.find((c) => c.type === 'kwave.dev/in-place-ready')!;
    assert.deepEqual(
      { status: gate.status, reason: gate.reason, extra: 'extra' in gate },
      { status: 'False', reason: 'R', extra: false },
    );
    // A non-pointer metav1.Time is always encoded: null when unset (the patch left lastProbeTime out).
    assert.equal(gate.lastProbeTime, null);
    assert.equal('lastProbeTime' in gate, true);
  });

  test('metav1.Time keeps whole seconds: the fraction is cut (not rounded) and the zone made UTC', async () => {
    const name = await freshPod();
    await send(
      'PATCH',
      `${podPath(name)}/status`,
      {
        status: {
          conditions: [
            { type: 'kwave.dev/in-place-ready', status: 'False', lastTransitionTime: '2026-03-04T05:06:07.999Z' },
          ],
        },
      },
      SMP,
    );
    let gate = (await read(name)).status.conditions.find((c) => c.type === 'kwave.dev/in-place-ready')!;
    assert.equal(gate.lastTransitionTime, '2026-03-04T05:06:07Z');
    await send(
      'PATCH',
      `${podPath(name)}/status`,
      {
        status: {
          conditions: [
            { type: 'kwave.dev/in-place-ready', status: 'True', lastTransitionTime: '2026-03-04T07:06:08.5+02:00' },
          ],
        },
      },
      SMP,
    );
    gate = (await read(name)).status.conditions.find((c) => c.type === 'kwave.dev/in-place-ready')!;
    assert.equal(gate.lastTransitionTime, '2026-03-04T05:06:08Z');
  });

  test('a patch that changes metadata.uid: 422 "field is immutable", the uid unchanged', async () => {
    const name = await freshPod();
    const before = await read(name);
    const r = await send('PATCH', podPath(name), { metadata: { uid: '00000000-0000-0000-0000-000000000000' } }, MERGE);
    assert.equal(r.code, 422, JSON.stringify(r.body));
    assert.match(
      r.body.message ?? '',
      /metadata\.uid: Invalid value: "00000000-0000-0000-0000-000000000000": field is immutable/,
    );
    assert.equal((await read(name)).metadata.uid, before.metadata.uid);
  });

  test('a PUT with another uid fails the UID precondition (409); one without a uid keeps the stored one', async () => {
    const name = await freshPod();
    const before = await read(name);
    const other = await send('PUT', podPath(name), {
      ...before,
      metadata: { ...before.metadata, uid: '00000000-0000-0000-0000-000000000000' },
    });
    assert.equal(other.code, 409, JSON.stringify(other.body));
    assert.match(
      other.body.message ?? '',
      /Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: /,
    );
    const { uid: _uid, ...withoutUid } = before.metadata;
    const kept = await send('PUT', podPath(name), {
      ...before,
      metadata: { ...withoutUid, labels: { app: 'demo', put: 'yes' } },
    });
    assert.equal(kept.code, 200, JSON.stringify(kept.body));
    assert.equal((await read(name)).metadata.uid, before.metadata.uid);
  });

  test('a changed creationTimestamp is ignored on update (the server keeps its own), not stored', async () => {
    // Unlike uid, the registry's update preparation puts the stored creationTimestamp back.
    const name = await freshPod();
    const before = await read(name);
    const r = await send('PATCH', podPath(name), { metadata: { creationTimestamp: '2001-01-01T00:00:00Z' } }, MERGE);
    assert.equal(r.code, 200, JSON.stringify(r.body));
    assert.equal((await read(name)).metadata.creationTimestamp, before.metadata.creationTimestamp);
  });
});
