// The real apiserver's audit log (JSON lines, Metadata level, see flags.ts) as request records,
// and counts keyed like /sim/stats's `requests` ("patch pods/status"). A request appears once:
// a long-running one (watch) at ResponseStarted, any other at ResponseComplete.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

export interface AuditRecord {
  auditID: string;
  stage: string;
  user: string;
  groups: string[];
  verb: string;
  /** Undefined for a non-resource request (/api, /readyz, …); then `path` says which. */
  resource: string | undefined;
  subresource: string | undefined;
  namespace: string | undefined;
  name: string | undefined;
  apiGroup: string | undefined;
  path: string;
  code: number | undefined;
  userAgent: string | undefined;
}

interface RawEvent {
  auditID?: string;
  stage?: string;
  verb?: string;
  requestURI?: string;
  userAgent?: string;
  user?: { username?: string; groups?: string[] };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
}

/** One audit line as a record (undefined for a line that is not an audit event). */
export function parseAuditLine(line: string): AuditRecord | undefined {
  if (!line.trim()) return undefined;
  let e: RawEvent;
  try {
    e = JSON.parse(line) as RawEvent;
  } catch {
    return undefined;
  }
  if (!e.auditID || !e.stage || !e.verb) return undefined;
  const o = e.objectRef;
  return {
    auditID: e.auditID,
    stage: e.stage,
    user: e.user?.username ?? '',
    groups: e.user?.groups ?? [],
    verb: e.verb,
    resource: o?.resource,
    subresource: o?.subresource,
    namespace: o?.namespace,
    name: o?.name,
    apiGroup: o?.apiGroup,
    path: (e.requestURI ?? '').split('?')[0] ?? '',
    code: e.responseStatus?.code,
    userAgent: e.userAgent,
  };
}

/**
 * Reads an audit log incrementally: each `read()` returns the requests completed (or, for
 * watches, started) since the last call, each once. A half-written last line waits for the next
 * call.
 */
export class AuditTail {
  private offset = 0;
  private partial = '';
  private readonly started = new Set<string>();

  constructor(private readonly path: string) {}

  read(): AuditRecord[] {
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch {
      return []; // no request logged yet
    }
    if (size < this.offset) {
      this.offset = 0; // replaced (a fresh control plane at the same path)
      this.partial = '';
    }
    if (size === this.offset) return [];
    const fd = openSync(this.path, 'r');
    const chunk = Buffer.alloc(size - this.offset);
    try {
      readSync(fd, chunk, 0, chunk.length, this.offset);
    } finally {
      closeSync(fd);
    }
    this.offset = size;
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    const out: AuditRecord[] = [];
    for (const line of lines) {
      const r = parseAuditLine(line);
      if (!r) continue;
      if (r.stage === 'ResponseStarted') {
        this.started.add(r.auditID);
        out.push(r);
      } else if (r.stage === 'ResponseComplete' || r.stage === 'Panic') {
        if (this.started.delete(r.auditID)) continue; // counted when it started
        out.push(r);
      }
    }
    return out;
  }
}

/** Every request in the log so far, each once. */
export function readAudit(path: string): AuditRecord[] {
  return new AuditTail(path).read();
}

/** The /sim/stats key of a resource request: "VERB RESOURCE[/SUBRESOURCE]"; undefined otherwise. */
export function requestKey(r: AuditRecord): string | undefined {
  if (!r.resource) return undefined;
  return `${r.verb} ${r.subresource ? `${r.resource}/${r.subresource}` : r.resource}`;
}
