import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { WatchEvents } from '../watch/events.js';
import { listenLimited } from '../core/limited-server.js';
import { allowed, isLoopbackHost } from './access.js';
import { DropInputs, readReport, REPORT_SUFFIX, type ReportKind } from './drop-inputs.js';
import type { DropLayout } from '../watch/sources/model.js';
import type { Html } from './html.js';
import { daysPage } from './pages/days-page.js';
import { inputPage, linesWanted } from './pages/input-page.js';
import { inputsPage } from './pages/inputs-page.js';
import { layout, type PageName } from './pages/layout.js';
import { ordersPage } from './pages/orders-page.js';
import { openRegular } from './safe-files.js';
import { sourceLines } from './source-lines.js';
import { APP_CSS, APP_JS } from './static-assets.js';

/**
 * Limits of the dashboard's port (like the health port's, HEALTH_LIMITS): every request is a
 * small GET; a few browsers each hold one live-update stream. Past the caps a connection is
 * closed as soon as it is accepted, and an idle one is dropped.
 */
export const UI_LIMITS = {
  maxConnections: 64,
  /** Live-update streams open at once; one more is answered 503 (the page still works, unrefreshed). */
  maxStreams: 16,
  idleTimeoutMs: 10_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderBytes: 8 * 1024,
  /** A comment on each live stream this often keeps proxies from closing it. */
  heartbeatMs: 15_000,
};

export interface DashboardOptions {
  /** The folder shown: a drop folder (with `layout`) or a folder of plain runs. */
  root: string;
  /** The drop folder's processing/, done/ and failed/ names; absent: the folder's own files only. */
  layout?: DropLayout;
  /** A watcher's events: inputs appear as waiting/processing before they have a report. */
  events?: WatchEvents;
  port: number;
  host: string;
  /** Required for any host but loopback (uiToken). */
  token?: string;
  /**
   * How often the folders' times are looked at while a page is open (live updates); their files
   * are listed again when a time moved, and every `RELIST_EVERY` looks anyway. Default 1 s.
   */
  liveMs?: number;
  limits?: Partial<typeof UI_LIMITS>;
}

export interface Dashboard {
  url: string;
  close(): Promise<void>;
}

/** Every answer: no script but ours, no framing, no sniffing, no caching, no referrer. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/**
 * Every this many looks the folders are listed even when their times did not move: a report
 * rewritten in place, or a file still being written, changes only the file's own time.
 */
const RELIST_EVERY = 10;

const CONTENT_TYPES: Record<ReportKind, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  errors: 'text/plain; charset=utf-8',
};

/**
 * `htorder ui` and `watch --ui`: the read-only dashboard (docs/ui.md). Server-rendered pages,
 * one small script for live updates (Server-Sent Events), nothing the request names is ever
 * turned into a path: inputs and their reports are found by listing the folder, and a request
 * picks one of those by its id.
 */
export async function startDashboard(opts: DashboardOptions): Promise<Dashboard> {
  if (!isLoopbackHost(opts.host) && !opts.token)
    throw new UsageError(
      `the dashboard binds ${opts.host}, which is not loopback: set uiToken (HTORDER_UI_TOKEN or a profile) so it asks for a token, and put it behind a TLS reverse proxy (docs/ui.md#remote-access)`,
    );
  const limits = { ...UI_LIMITS, ...opts.limits };
  const inputs = new DropInputs(opts.root, opts.layout);
  const streams = new Set<ServerResponse>();
  let version = 0;
  let scanning: Promise<boolean> | undefined;
  let scannedAt = 0;

  const scan = (): Promise<boolean> => {
    scanning ??= inputs.scan().finally(() => {
      scanning = undefined;
      scannedAt = Date.now();
    });
    return scanning;
  };
  const fresh = async (): Promise<void> => {
    if (scanning || Date.now() - scannedAt > 200) await scan();
  };
  const announce = (): void => {
    version += 1;
    for (const s of streams) s.write(`data: ${version}\n\n`);
  };
  // A watcher's event means the folder changed too (a file claimed, reports in place): the next page looks again.
  const unfollow = opts.events
    ? inputs.follow(opts.events, () => {
        scannedAt = 0;
        announce();
      })
    : undefined;
  // While someone is looking, look at the folder too: reports written, files dropped by hand.
  // Listing every file each second cost a stat per file; the folders' own times say when an
  // entry came, went or was renamed over (how reports are written), so most looks are 4 stats.
  const liveMs = opts.liveMs ?? 1000;
  const ticker = setInterval(() => {
    if (streams.size === 0) return;
    const relist = Date.now() - scannedAt >= RELIST_EVERY * liveMs;
    (relist ? Promise.resolve(true) : inputs.foldersChanged())
      .then((changed) => (changed ? scan() : false))
      .then(
        (changed) => changed && announce(),
        () => undefined,
      );
  }, liveMs);
  ticker.unref();
  const heartbeat = setInterval(() => {
    for (const s of streams) s.write(': keep-alive\n\n');
  }, limits.heartbeatMs);
  heartbeat.unref();

  const page = (res: ServerResponse, name: PageName, title: string, body: Html): void => {
    const text = layout({ title, page: name, root: opts.root, live: true, body }).text;
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' }).end(text);
  };
  const plain = (res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void => {
    res
      .writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', ...extra })
      .end(`${text}\n`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return plain(res, 405, 'read-only', { allow: 'GET, HEAD', connection: 'close' });
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)
      return plain(res, 413, 'no request bodies here', { connection: 'close' });
    const access = allowed(req, opts.token);
    if (access === 'unauthorized')
      return plain(res, 401, 'this dashboard asks for its token', {
        'www-authenticate': 'Basic realm="htorder dashboard", charset="UTF-8"',
      });
    if (access === 'bad-host') return plain(res, 403, 'this dashboard answers to loopback host names only');
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    const q = (k: string): string | undefined => url.searchParams.get(k) ?? undefined;
    switch (url.pathname) {
      case '/static/app.js':
        res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/javascript; charset=utf-8' }).end(APP_JS);
        return;
      case '/static/app.css':
        res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/css; charset=utf-8' }).end(APP_CSS);
        return;
      case '/events':
        return stream(req, res);
      case '/':
        await fresh();
        return page(res, 'inputs', 'Inputs', inputsPage(inputs.list(), { status: q('status'), day: q('day') }));
      case '/orders':
        await fresh();
        return page(res, 'orders', 'Orders in flight', ordersPage(inputs.list()));
      case '/days':
        await fresh();
        return page(res, 'days', 'The last days', daysPage(inputs.list(), Date.now()));
      case '/input': {
        await fresh();
        const r = inputs.find(q('id') ?? '');
        if (!r) return plain(res, 404, 'no such input (it may have moved: go back to the list)');
        const read = r.reports.json ? await readReport(r.reports.json) : undefined;
        const lines = await sourceLines(r.inputPath, linesWanted(read?.view));
        return page(res, 'input', r.name, inputPage(r, read?.view, read?.problem, lines));
      }
      case '/file': {
        await fresh();
        const r = inputs.find(q('id') ?? '');
        const kind = (Object.keys(REPORT_SUFFIX) as ReportKind[]).find((k) => k === q('kind'));
        const path = kind && r?.reports[kind];
        if (!r || !kind || !path) return plain(res, 404, 'no such report');
        return download(res, path, kind);
      }
      default:
        return plain(res, 404, 'not found');
    }
  };

  const stream = (req: IncomingMessage, res: ServerResponse): void => {
    if (streams.size >= limits.maxStreams) {
      plain(res, 503, 'too many live pages open', { 'retry-after': '30' });
      return;
    }
    // A stream is quiet for long stretches: it is kept alive by the heartbeat, not the idle timeout.
    req.socket.setTimeout(0);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    res.write(`retry: 2000\ndata: ${version}\n\n`);
    streams.add(res);
    res.on('close', () => streams.delete(res));
  };

  const download = async (res: ServerResponse, path: string, kind: ReportKind): Promise<void> => {
    const opened = await openRegular(path);
    if (!opened) return plain(res, 404, 'no such report');
    const name = basename(path);
    const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': CONTENT_TYPES[kind],
      'content-length': String(opened.stat.size),
      'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    });
    const body = opened.handle.createReadStream({ start: 0, end: Math.max(0, opened.stat.size - 1) });
    if (opened.stat.size === 0) {
      body.destroy();
      res.end();
      return;
    }
    body.pipe(res);
    res.on('close', () => body.destroy());
  };

  const { server, url } = await listenLimited(limits, { port: opts.port, host: opts.host }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) plain(res, 500, 'the dashboard could not read this; see the log');
      else res.destroy();
    });
  });
  await scan();
  return {
    url: `${url}/`,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(ticker);
        clearInterval(heartbeat);
        unfollow?.();
        for (const s of streams) s.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
