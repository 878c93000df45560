// Thin helpers over node's HTTP objects: reading a bounded body, sending JSON and Status bodies,
// and streaming large lists in chunks that respect back-pressure.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, failure, type Status } from './status.js';

const MAX_BODY = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728', {}));
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
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
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Content-Length': body.length, ...headers });
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
 * 1 MiB, so a 50,000-item list is never one giant string in memory.
 */
export async function streamJsonList(res: ServerResponse, head: string, pieces: Iterable<string>, tail: string): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  let buf = head;
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
