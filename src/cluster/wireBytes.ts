// Reading an answer's bytes without decoding them: the object's resourceVersion, peeked, and a
// watch stream cut into lines. Plain functions over Buffers, importing nothing (the bench's
// minimal client uses them too).

const VERSION_KEY = Buffer.from('"resourceVersion":"');
const QUOTE = 0x22;
const NEWLINE = 0x0a;

/**
 * The object's resourceVersion in an answer or a watch line, found without decoding it: the first
 * `"resourceVersion":"` key. The API server writes metadata before the rest and resourceVersion
 * before labels and annotations; inside a string value (a last-applied annotation) the quotes are
 * escaped, so that text cannot match there. Undefined if absent or not a plain number.
 */
export function peekResourceVersion(body: Buffer): string | undefined {
  const at = body.indexOf(VERSION_KEY);
  if (at === -1) return undefined;
  const start = at + VERSION_KEY.length;
  const end = body.indexOf(QUOTE, start);
  if (end <= start) return undefined;
  for (let i = start; i < end; i++) if (body[i]! < 0x30 || body[i]! > 0x39) return undefined;
  return body.toString('latin1', start, end);
}

/**
 * Cuts a byte stream into lines (without their newline) for `onLine`; `end` hands on an unfinished
 * last one. Cut on bytes: a newline byte never occurs inside a multi-byte UTF-8 character, so each
 * line decodes whole, and no chunk is copied into a string to be searched.
 */
export function lineSplitter(onLine: (line: Buffer) => void): { push(chunk: Buffer): void; end(): void } {
  let pending: Buffer[] = [];
  return {
    push(chunk) {
      let start = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        const piece = chunk.subarray(start, nl);
        if (pending.length === 0) onLine(piece);
        else {
          onLine(Buffer.concat([...pending, piece]));
          pending = [];
        }
        start = nl + 1;
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    },
    end() {
      if (pending.length) onLine(Buffer.concat(pending));
      pending = [];
    },
  };
}

/** Whether a line holds only JSON whitespace (the server may send blank lines). */
export function isBlankLine(line: Buffer): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== NEWLINE) return false;
  return true;
}
