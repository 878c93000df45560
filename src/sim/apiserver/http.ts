// Thin helpers over node's HTTP objects: reading a bounded body, sending JSON and Status bodies,
// and streaming large lists in chunks that respect back-pressure.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, failure, type Status } from './status.js';

const MAX_BODY = 3 * 1024 * 1024;

/**
 * The request's body as text. Read with listeners, not `for await`: a stream's async iterator
 * (its promise per chunk, its end-of-stream watcher) was ~3 % of the simulator's CPU at ~1,200
 * small bodies a second. Too large a body is refused and the request destroyed, as leaving the
 * iterator did.
 */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > MAX_BODY) {
        fail(new ApiError(failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728', {})));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', fail);
    // 'close' follows 'end' on every request: the Error (a stack trace) is made only when it did not.
    req.on('close', () => {
      if (!settled) fail(new Error('the request was closed before its body ended'));
    });
  });
}

export function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, code, JSON.stringify(body), headers);
}

export function sendText(res: ServerResponse, code: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // Encoded once: Buffer.byteLength and then the write each walked the text (~3 KB a pod).
  const body = Buffer.from(text);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': body.length,
    ...headers,
  });
  res.end(body);
}

export function sendStatus(res: ServerResponse, status: Status, headers: Record<string, string> = {}): void {
  sendJson(res, status.code, status, headers);
}

/** Waits until the socket has taken what was written (or the client went away). */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Sends `head` + the pieces joined by commas + `tail` as one JSON document, in chunks of about
 * 1 MiB, so a 50,000-item list is never one giant string in memory. The head (the list's
 * metadata, with its continue token) goes out at once, before any item is encoded, as
 * kube-apiserver's streaming list encoding sends it (KEP-5116, on by default since 1.33): a
 * client that reads the token there asks for the next page while this one is still being
 * encoded. Held back with the items, the token would come only with the whole page, and a paged
 * list of 50,000 pods would wait ~4 ms a page for it.
 */
export async function streamJsonList(
  res: ServerResponse,
  head: string,
  pieces: Iterable<string>,
  tail: string,
): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.write(head);
  // Node corks a chunked response's socket until the next tick: let that tick come, so the head
  // leaves before the items are encoded (all at once, for a page).
  await new Promise((resolve) => setImmediate(resolve));
  if (res.destroyed) return;
  let buf = '';
  let first = true;
  for (const piece of pieces) {
    buf += first ? piece : `,${piece}`;
    first = false;
    if (buf.length >= 1 << 20) {
      const ok = res.write(buf);
      buf = '';
      if (!ok) await drained(res);
      if (res.destroyed) return;
    }
  }
  res.end(buf + tail);
}
