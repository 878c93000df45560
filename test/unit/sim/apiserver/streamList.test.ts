import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { streamJsonList } from '../../../../src/sim/apiserver/http.js';

describe('streamJsonList', () => {
  test("the head (a page's continue token) has left before the first item is encoded", async () => {
    let atFirstItem: { corked: number; pending: number } | undefined;
    const server = http.createServer((_req, res) => {
      function* items(): Generator<string> {
        atFirstItem = { corked: res.socket!.writableCorked, pending: res.socket!.writableLength };
        for (let i = 0; i < 3; i++) yield JSON.stringify({ i });
      }
      void streamJsonList(res, '{"kind":"PodList","metadata":{"continue":"next"},"items":[', items(), ']}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      assert.deepEqual(JSON.parse(body), {
        kind: 'PodList',
        metadata: { continue: 'next' },
        items: [{ i: 0 }, { i: 1 }, { i: 2 }],
      });
      assert.deepEqual(atFirstItem, { corked: 0, pending: 0 }, 'nothing held back in the socket when the items start');
    } finally {
      server.close();
    }
  });
});
