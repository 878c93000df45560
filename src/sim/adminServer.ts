// The simulator's second port (plain HTTP, no auth, loopback): the app's traffic metrics for
// Prometheus, /sim/stats for tests that check budgets from outside kwave, and admin endpoints
// that switch faults and inject disruptions at run time. Routes are listed in docs/sim.md.
//
// The same routes serve both backends: what differs (how a pod is deleted, how a node goes
// NotReady, where request counts come from, whether API faults can be injected) is the backend's
// SimControl.
import { isLoopback, listen } from './listen.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AppTraffic } from './appMetrics.js';
import { mergeFaults, resetFaults } from './disruptions.js';
import type { Faults } from './faults.js';
import type { Admission, AdmissionRule } from './apiserver/admission.js';
import type { ImageTable } from './images.js';
import type { StatsSnapshot } from './stats.js';
import { StoreError } from './store.js';

/** What a deletion through the admin port did. */
interface PodDeletion {
  namespace: string;
  name: string;
  uid: string | undefined;
  deletionTimestamp: string | null;
  /** Gone at once (unbound pod, or grace 0) rather than left to its kubelet. */
  removed: boolean;
}

/** A backend's side of the admin port. */
export interface SimControl {
  stats(): StatsSnapshot | Promise<StatsSnapshot>;
  resetStats(): StatsSnapshot | Promise<StatsSnapshot>;
  /** The live API faults; a string says why this backend has none (e.g. embedded-only). */
  faults: Faults | string;
  /** Admission rules that refuse or hold writes; a string says why this backend has none. */
  admission: Admission | string;
  traffic: AppTraffic;
  images: ImageTable;
  deletePod(namespace: string, name: string, gracePeriodSeconds: number | undefined): Promise<PodDeletion>;
  setNodeReady(name: string, ready: boolean): Promise<void>;
  /** The "node deleted" fault: the Node object deleted through the API; its pods are then the pod GC's. */
  deleteNode(name: string): Promise<void>;
  /**
   * The "container crashed" fault: the pod's container (default: the first) exits with code 1 and
   * its kubelet restarts it. False when it was not running. Only a backend whose kubelet is the simulator's has it.
   */
  crashContainer?(namespace: string, name: string, container: string | undefined): Promise<boolean>;
  /** Restarts a node's kubelet process; only a backend with real kubelets has one. */
  restartKubelet?(name: string): Promise<void>;
}

export interface AdminServerOptions {
  control: SimControl;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
}

export interface AdminServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  close(): Promise<void>;
}

/** A refusal of the admin port, with its HTTP status (404 for an unknown pod or node). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Handler = (
  req: IncomingMessage,
  url: URL,
  params: string[],
) => Promise<{ status?: number; body: unknown; text?: boolean }>;

const MAX_BODY = 64 * 1024;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, 'body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'body is not valid JSON');
  }
}

function graceParam(url: URL): number | undefined {
  const raw = url.searchParams.get('gracePeriodSeconds');
  if (raw === null) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new HttpError(400, `gracePeriodSeconds: expected a whole number >= 0, found "${raw}"`);
  return n;
}

export async function startAdminServer(opts: AdminServerOptions): Promise<AdminServer> {
  const control = opts.control;
  const faults = (): Faults => {
    if (typeof control.faults === 'string') throw new HttpError(400, control.faults);
    return control.faults;
  };
  const admission = (): Admission => {
    if (typeof control.admission === 'string') throw new HttpError(400, control.admission);
    return control.admission;
  };
  const routes: [string, RegExp, Handler][] = [
    ['GET', /^\/metrics$/, async () => ({ body: control.traffic.exposition(), text: true })],
    ['GET', /^\/healthz$/, async () => ({ body: 'ok', text: true })],
    ['GET', /^\/sim\/stats$/, async () => ({ body: await control.stats() })],
    ['POST', /^\/sim\/stats\/reset$/, async () => ({ body: await control.resetStats() })],
    ['GET', /^\/sim\/faults$/, async () => ({ body: faults() })],
    [
      'POST',
      /^\/sim\/faults$/,
      async (req) => {
        const live = faults();
        const patch = await readJson(req);
        try {
          return { body: mergeFaults(live, patch) };
        } catch (err) {
          throw new HttpError(400, (err as Error).message);
        }
      },
    ],
    ['DELETE', /^\/sim\/faults$/, async () => ({ body: resetFaults(faults()) })],
    ['GET', /^\/sim\/admission$/, async () => ({ body: admission().current })],
    [
      'POST',
      /^\/sim\/admission$/,
      async (req) => {
        const rules = await readJson(req);
        if (!Array.isArray(rules))
          throw new HttpError(
            400,
            'expected a JSON list of rules: [{verb, resource, name?, refuse?: 403|422, hold?: true, times?, skip?}]',
          );
        admission().set(rules as AdmissionRule[]);
        return { body: admission().current };
      },
    ],
    ['POST', /^\/sim\/admission\/release$/, async () => ({ body: { released: admission().release() } })],
    ['GET', /^\/sim\/images$/, async () => ({ body: control.images.entries() })],
    [
      'POST',
      /^\/sim\/pods\/([^/]+)\/([^/]+)\/delete$/,
      async (_req, url, [ns, name]) => ({ status: 202, body: await control.deletePod(ns!, name!, graceParam(url)) }),
    ],
    [
      'POST',
      /^\/sim\/pods\/([^/]+)\/([^/]+)\/crash$/,
      async (_req, url, [ns, name]) => {
        if (!control.crashContainer)
          throw new HttpError(409, 'crash needs the simulated kubelet: a real kubelet runs no simulated container');
        const crashed = await control.crashContainer(ns!, name!, url.searchParams.get('container') ?? undefined);
        if (!crashed) throw new HttpError(409, `pod ${ns}/${name}: no running container to crash`);
        return { body: { namespace: ns, name, crashed } };
      },
    ],
    [
      'POST',
      /^\/sim\/nodes\/([^/]+)\/delete$/,
      async (_req, _url, [name]) => {
        await control.deleteNode(name!);
        return { body: { node: name, deleted: true } };
      },
    ],
    [
      'POST',
      /^\/sim\/nodes\/([^/]+)\/(not-ready|ready)$/,
      async (_req, _url, [name, what]) => {
        await control.setNodeReady(name!, what === 'ready');
        return { body: { node: name, ready: what === 'ready' } };
      },
    ],
    [
      'POST',
      /^\/sim\/nodes\/([^/]+)\/restart-kubelet$/,
      async (_req, _url, [name]) => {
        if (!control.restartKubelet)
          throw new HttpError(
            409,
            'restart-kubelet needs real kubelets: kwave sim --control-plane real --kubelet real',
          );
        await control.restartKubelet(name!);
        return { body: { node: name, restarted: true } };
      },
    ],
  ];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const matching = routes.filter(([, re]) => re.test(url.pathname));
    try {
      if (matching.length === 0) throw new HttpError(404, `no such endpoint: ${url.pathname}`);
      const route = matching.find(([method]) => method === req.method);
      if (!route) {
        res.setHeader('Allow', matching.map(([m]) => m).join(', '));
        throw new HttpError(405, `${req.method} not allowed on ${url.pathname}`);
      }
      const params = (route[1].exec(url.pathname) ?? []).slice(1).map((p) => decodeURIComponent(p));
      const out = await route[2](req, url, params);
      if (out.text) {
        res.writeHead(out.status ?? 200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(out.body as string);
      } else {
        res.writeHead(out.status ?? 200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(out.body) + '\n');
      }
    } catch (err) {
      const status =
        err instanceof HttpError
          ? err.status
          : err instanceof StoreError
            ? err.reason === 'NotFound'
              ? 404
              : 409
            : 500;
      const message =
        err instanceof StoreError && err.reason === 'NotFound'
          ? `${err.resource} "${err.objectName}" not found`
          : (err as Error).message;
      if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: message }) + '\n');
    }
  };

  const host = opts.host ?? '127.0.0.1';
  // No auth, and it deletes pods and switches faults: never reachable from another machine.
  if (!isLoopback(host)) throw new Error(`the simulator's admin port binds to loopback only, not to ${host}`);
  const server = createServer((req, res) => void handle(req, res));
  const address = await listen(server, opts.port ?? 0, host);
  let closing: Promise<void> | undefined;
  return {
    url: `http://${address}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
