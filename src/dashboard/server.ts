// The dashboard's HTTP server (node:http: a handful of routes needs no framework): the page and
// its assets from the package's files (no build step for the user), the view as JSON
// (`GET /api/view`) and as server-sent events (`GET /api/stream`, one `view` event per new view;
// the browser's EventSource reconnects by itself), and the actions (`POST /api/actions`). Who may
// use it: access.ts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { packagePath } from '../packageRoot.js';
import { checkAccess, csrfMatches, CSRF_HEADER, tokenCookie, type AccessPolicy } from './access.js';
import type { ActionAnswer, ActionRequest } from './actions.js';
import type { DashboardView, RolloutAction, RolloutView } from './viewModel.js';

interface ViewSource {
  view(): DashboardView;
  subscribe(listener: (view: DashboardView) => void): () => void;
}

export interface DashboardServerOptions {
  host: string;
  port: number;
  /** Set when listening beyond loopback: every request must carry it. */
  token?: string;
  csrf: string;
  feed: ViewSource;
  /** Carries out an action on the rollout the view names (undefined: none by that id). */
  act: (request: ActionRequest, rollout: RolloutView | undefined) => Promise<ActionAnswer>;
}

export interface DashboardServer {
  /** The port it listens on (the one asked for, or the one the OS chose for 0). */
  port: number;
  close(): Promise<void>;
}

const ACTIONS: readonly RolloutAction[] = ['approve', 'pause', 'resume', 'abort'];
const MAX_BODY = 4096;

/** The page's files: ours from assets/dashboard, uPlot's from its package. */
function assetFiles(): Map<string, { path: string; type: string }> {
  const uplot = (file: string) => createRequire(import.meta.url).resolve(`uplot/dist/${file}`);
  const own = (file: string) => packagePath('assets', 'dashboard', file);
  return new Map([
    ['/assets/app.js', { path: own('app.js'), type: 'text/javascript; charset=utf-8' }],
    ['/assets/chart.js', { path: own('chart.js'), type: 'text/javascript; charset=utf-8' }],
    ['/assets/style.css', { path: own('style.css'), type: 'text/css; charset=utf-8' }],
    ['/assets/uPlot.iife.min.js', { path: uplot('uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' }],
    ['/assets/uPlot.min.css', { path: uplot('uPlot.min.css'), type: 'text/css; charset=utf-8' }],
  ]);
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...extra });
  res.end(body);
}
const sendJson = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const assets = assetFiles();
  const page = readFileSync(packagePath('assets', 'dashboard', 'index.html'), 'utf8');
  const streams = new Set<ServerResponse>();
  let policy: AccessPolicy = {
    csrf: options.csrf,
    port: options.port,
    ...(options.token ? { token: options.token } : {}),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    const access = checkAccess(policy, {
      ...(req.headers.host ? { host: req.headers.host } : {}),
      ...(req.headers.cookie ? { cookie: req.headers.cookie } : {}),
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      ...(url.searchParams.has('token') ? { queryToken: url.searchParams.get('token')! } : {}),
    });
    if (access.kind === 'denied') return send(res, access.status, 'text/plain; charset=utf-8', access.message + '\n');
    if (access.kind === 'set-cookie')
      return send(res, 303, 'text/plain; charset=utf-8', '', {
        location: url.pathname,
        'set-cookie': tokenCookie(policy.token!),
      });

    if (req.method === 'GET' && url.pathname === '/')
      return send(res, 200, 'text/html; charset=utf-8', page.replace('__KWAVE_CSRF__', options.csrf));
    const asset = req.method === 'GET' ? assets.get(url.pathname) : undefined;
    if (asset) return send(res, 200, asset.type, readFileSync(asset.path), { 'cache-control': 'no-cache' });
    if (req.method === 'GET' && url.pathname === '/api/view') return sendJson(res, 200, options.feed.view());
    if (req.method === 'GET' && url.pathname === '/api/stream') return stream(res);
    if (req.method === 'POST' && url.pathname === '/api/actions') return action(req, res);
    return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  };

  const stream = (res: ServerResponse) => {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream', connection: 'keep-alive' });
    const push = (view: DashboardView) => res.write(`event: view\ndata: ${JSON.stringify(view)}\n\n`);
    push(options.feed.view());
    const unsubscribe = options.feed.subscribe(push);
    streams.add(res);
    res.on('close', () => {
      unsubscribe();
      streams.delete(res);
    });
  };

  const action = async (req: IncomingMessage, res: ServerResponse) => {
    if (!csrfMatches(policy, headerOf(req, CSRF_HEADER)))
      return sendJson(res, 403, { ok: false, message: 'missing or wrong CSRF token: reload the page' });
    if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
      return sendJson(res, 415, { ok: false, message: 'expected application/json' });
    const body = await readBody(req);
    const request = parseAction(body);
    if (!request) return sendJson(res, 400, { ok: false, message: 'expected {"id", "action", "wave"?}' });
    const view = options.feed.view().rollouts.find((r) => r.id === request.id);
    const answer = await options.act(request, view);
    sendJson(res, answer.status, answer);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { ok: false, message: `kwave dashboard: ${(err as Error).message}` });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  policy = { ...policy, port };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of streams) s.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > MAX_BODY) break;
  }
  return text;
}

function parseAction(text: string): ActionRequest | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const d = doc as { id?: unknown; action?: unknown; wave?: unknown } | null;
  if (typeof d?.id !== 'string' || !ACTIONS.includes(d.action as RolloutAction)) return undefined;
  if (d.wave !== undefined && typeof d.wave !== 'number') return undefined;
  return { id: d.id, action: d.action as RolloutAction, ...(typeof d.wave === 'number' ? { wave: d.wave } : {}) };
}
