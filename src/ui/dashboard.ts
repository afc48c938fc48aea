import { realpath } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { WatchEvents } from '../watch/events.js';
import { listenLimited, UntrustedConnections } from '../core/limited-server.js';
import { isLoopbackHost } from '../core/config/url-security.js';
import { allowed, cookieName, generatedToken, type Access } from './access.js';
import { DropInputs, readReport, REPORT_SUFFIX, type InputRecord, type ReportKind } from './drop-inputs.js';
import type { DropLayout } from '../watch/sources/model.js';
import type { Html } from './html.js';
import { daysPage } from './pages/days-page.js';
import { inputPage, linesWanted } from './pages/input-page.js';
import { inputsPage } from './pages/inputs-page.js';
import { layout, type PageName } from './pages/layout.js';
import { ordersPage } from './pages/orders-page.js';
import { openRegular } from './safe-files.js';
import { sourceLines } from './source-lines.js';
import { submissions, type Submissions } from './submissions.js';
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
  /**
   * Live-update streams of one client address, so one client cannot hold them all (behind a
   * reverse proxy every browser shares the proxy's address).
   */
  maxStreamsPerClient: 8,
  /** A live-update stream is ended after this long; the page's script opens a new one at once. */
  streamLifetimeMs: 10 * 60_000,
  /**
   * Connections that have not shown the token yet (another local user, a port scan), held apart
   * so they cannot crowd out the owner's (UntrustedConnections): each closed 3 s after it was
   * accepted; past 32 (16 from one address) the oldest that had a second to send its request
   * is closed for each new one, past 256 the oldest.
   */
  maxUntrusted: 256,
  keepUntrusted: 32,
  keepUntrustedPerAddress: 16,
  graceMs: 1_000,
  untrustedMs: 3_000,
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
  /** The token every request must carry (uiToken); absent: one is generated for this start (loopback only). */
  token?: string;
  /**
   * The file its starter keeps the link with the token in, by port (`watch --ui`): named on the
   * page a request without the token gets. Absent: the link is printed (`htorder ui`).
   */
  linkFile?: (port: number) => string;
  /**
   * How often the folders' times are looked at while a page is open (live updates); their names
   * are listed again when a time moved, and every file every `RELIST_EVERY` looks. Default 1 s.
   */
  liveMs?: number;
  limits?: Partial<typeof UI_LIMITS>;
}

export interface Dashboard {
  /** The dashboard's address, without the token. */
  url: string;
  /** The address to open: `url` with `?token=`; opening it keeps the token in a cookie. */
  openUrl: string;
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
 * Every this many looks every file of the folders is looked at again, even when their times
 * did not move: a report rewritten in place or renamed over a name already listed, or a file
 * still being written, changes only the file's own time.
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
  // The folder by its real path: its layout folders and files are then opened never through a link.
  const root = await realpath(opts.root).catch(() => opts.root);
  const live = new LiveInputs(new DropInputs(root, opts.layout), opts, limits);
  const access: Access = { token: opts.token ?? generatedToken(), cookie: '', loopbackHostOnly: !opts.token };
  const gate: Gate = { access, untrusted: new UntrustedConnections(limits), help: '' };
  const { server, url } = await listenLimited(
    limits,
    { port: opts.port, host: opts.host },
    (req, res) => {
      handle(live, opts, gate, req, res).catch(() => {
        if (!res.headersSent) plain(res, 500, 'the dashboard could not read this; see the log');
        else res.destroy();
      });
    },
    gate.untrusted,
  );
  const port = Number(new URL(url).port);
  access.cookie = cookieName(port);
  gate.help = tokenHelp(opts, port);
  await live.scan();
  return {
    url: `${url}/`,
    openUrl: `${url}/?token=${encodeURIComponent(access.token)}`,
    close: () =>
      new Promise<void>((resolve) => {
        live.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The folder's inputs, listed again when a page asks and they may have moved, and the live-update
 * streams of the open pages, told a new version whenever the folder changed.
 */
class LiveInputs {
  private readonly streams = new Set<ServerResponse>();
  /** Open streams per client address. */
  private readonly perClient = new Map<string, number>();
  private version = 0;
  private scanning: Promise<boolean> | undefined;
  private scanningFull = false;
  /** When the last full listing began: every file is looked at again after RELIST_EVERY looks. */
  private fullAt = 0;
  /** A watcher's event came since the last scan: the folder changed. */
  private told = false;
  private readonly liveMs: number;
  private readonly timers: NodeJS.Timeout[];
  private readonly unfollow: (() => void) | undefined;

  constructor(
    readonly inputs: DropInputs,
    opts: Pick<DashboardOptions, 'events' | 'liveMs'>,
    private readonly limits: typeof UI_LIMITS,
  ) {
    this.unfollow = opts.events
      ? inputs.follow(opts.events, () => {
          this.told = true;
          this.announce();
        })
      : undefined;
    // While someone is looking, look at the folder too: reports written, files dropped by hand.
    // The folders' own times say when an entry came, went or was renamed over (how reports are
    // written), so most looks cost a stat per folder instead of one per file.
    this.liveMs = opts.liveMs ?? 1000;
    const ticker = setInterval(() => {
      if (this.streams.size === 0) return;
      (this.relistDue() ? this.scan(true) : this.look()).then(
        (changed) => changed && this.announce(),
        () => undefined,
      );
    }, this.liveMs);
    const heartbeat = setInterval(() => {
      for (const s of this.streams) s.write(': keep-alive\n\n');
    }, limits.heartbeatMs);
    this.timers = [ticker, heartbeat];
    for (const t of this.timers) t.unref();
  }

  /** Lists the folders (`full`: every file, else what moved); one listing at a time. */
  scan(full = true): Promise<boolean> {
    if (!this.scanning) {
      const startedAt = Date.now();
      this.told = false;
      this.scanningFull = full;
      this.scanning = this.inputs.scan(full).finally(() => {
        this.scanning = undefined;
        if (full) this.fullAt = startedAt;
      });
    }
    return this.scanning;
  }

  private relistDue(): boolean {
    return Date.now() - this.fullAt >= RELIST_EVERY * this.liveMs;
  }

  /**
   * Lists again the folders whose times moved (a few stats when none did); whether the inputs
   * changed. A full listing under way is not waited for: it tells the open pages what it finds.
   */
  private async look(): Promise<boolean> {
    if (this.scanning) return this.scanningFull ? false : this.scanning;
    if (this.told || (await this.inputs.foldersChanged())) return this.scan(false);
    return false;
  }

  /**
   * The inputs as they are now: what came, went or was renamed is listed before the page is
   * made. A full listing that is due (a file rewritten under a name already known) runs after
   * it, and open pages are told when it found a change: a page never waits for every file of a
   * large folder to be looked at.
   */
  async fresh(): Promise<DropInputs> {
    await this.look();
    if (this.relistDue())
      this.scan(true).then(
        (changed) => changed && this.announce(),
        () => undefined,
      );
    return this.inputs;
  }

  private announce(): void {
    this.version += 1;
    for (const s of this.streams) s.write(`data: ${this.version}\n\n`);
  }

  /** Answers `/events`: a live-update stream, or 503 past the caps; ended after its lifetime. */
  stream(req: IncomingMessage, res: ServerResponse): void {
    const client = req.socket.remoteAddress ?? '';
    const mine = this.perClient.get(client) ?? 0;
    if (this.streams.size >= this.limits.maxStreams || mine >= this.limits.maxStreamsPerClient) {
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
    res.write(`retry: 2000\ndata: ${this.version}\n\n`);
    this.streams.add(res);
    this.perClient.set(client, mine + 1);
    const lifetime = setTimeout(() => res.end(), this.limits.streamLifetimeMs);
    lifetime.unref();
    res.on('close', () => {
      clearTimeout(lifetime);
      this.streams.delete(res);
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left > 0) this.perClient.set(client, left);
      else this.perClient.delete(client);
    });
  }

  close(): void {
    for (const t of this.timers) clearInterval(t);
    this.unfollow?.();
    for (const s of this.streams) s.end();
  }
}

/** Each list's submissions, counted once: the list is the same array until the folder or the watcher changed it. */
const countedFor = new WeakMap<readonly InputRecord[], Submissions>();
function counted(all: readonly InputRecord[]): Submissions {
  let subs = countedFor.get(all);
  if (!subs) {
    subs = submissions(all);
    countedFor.set(all, subs);
  }
  return subs;
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res
    .writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', ...extra })
    .end(`${text}\n`);
}

function send(res: ServerResponse, contentType: string, text: string): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': contentType }).end(text);
}

type Refusal = [status: number, text: string, headers?: Record<string, string>];

/** Who may in: the token, the connections that have not shown it yet, and what to tell those without it. */
interface Gate {
  access: Access;
  untrusted: UntrustedConnections;
  /** The page a request without the token gets: where its owner finds the link. */
  help: string;
}

/**
 * Where the owner finds the token: the link the command printed, the file `watch --ui` keeps it
 * in, or the uiToken they set. Shown to anyone who reaches the port without it; a configured
 * token (the only kind another machine can reach) names no file.
 */
function tokenHelp(opts: Pick<DashboardOptions, 'token' | 'linkFile'>, port: number): string {
  const head = 'This dashboard asks for its token.';
  if (opts.token)
    return `${head} It is the one set as uiToken (HTORDER_UI_TOKEN, or uiToken in a profile of the config file); a browser asks for it as the password of its sign-in, with any user name.`;
  const again = 'Each start makes a new token: a link from an earlier start opens nothing.';
  const file = opts.linkFile?.(port);
  if (file === undefined) return `${head} Open the link htorder ui printed when it started (its first line). ${again}`;
  return `${head} Open the link htorder watch --ui printed when it started, or the one in the file ${file}, readable by the watcher's user only (cat ${file}). ${again}`;
}

/**
 * The answer to a request a read-only dashboard never serves (status, text, headers), or
 * undefined; a request that brought the token in its query gets the cookie (`cookie`).
 */
function refusal(req: IncomingMessage, gate: Gate, url: URL, cookie: Record<string, string>): Refusal | undefined {
  const { access } = gate;
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return [405, 'read-only', { allow: 'GET, HEAD', connection: 'close' }];
  if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)
    return [413, 'no request bodies here', { connection: 'close' }];
  const verdict = allowed(req, access, url);
  if (verdict === 'ok-from-query')
    // HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it.
    cookie['set-cookie'] = `${access.cookie}=${access.token}; Path=/; HttpOnly; SameSite=Strict`;
  // A refused request's connection is closed with the answer: it never waits, kept alive, for another try.
  const close = { connection: 'close' };
  if (verdict === 'cross-site') return [403, 'this dashboard answers its own pages only, not other sites', close];
  if (verdict === 'unauthorized')
    return [401, gate.help, { 'www-authenticate': 'Basic realm="htorder dashboard", charset="UTF-8"', ...close }];
  if (verdict === 'bad-host') return [403, 'this dashboard answers to loopback host names only', close];
  // Shown the token: from now on the connection is the owner's, not held to the untrusted caps.
  gate.untrusted.trust(req.socket);
  return undefined;
}

async function handle(
  live: LiveInputs,
  opts: DashboardOptions,
  gate: Gate,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
  const cookie: Record<string, string> = {};
  const refused = refusal(req, gate, url, cookie);
  if (refused) return plain(res, ...refused);
  for (const [k, v] of Object.entries(cookie)) res.setHeader(k, v);
  const q = (k: string): string | undefined => url.searchParams.get(k) ?? undefined;
  const page = (name: PageName, title: string, body: Html): void =>
    send(res, 'text/html; charset=utf-8', layout({ title, page: name, root: opts.root, live: true, body }).text);
  switch (url.pathname) {
    case '/static/app.js':
      return send(res, 'text/javascript; charset=utf-8', APP_JS);
    case '/static/app.css':
      return send(res, 'text/css; charset=utf-8', APP_CSS);
    case '/events':
      return live.stream(req, res);
    case '/': {
      const all = (await live.fresh()).list();
      return page('inputs', 'Inputs', inputsPage(all, { status: q('status'), day: q('day') }, counted(all)));
    }
    case '/orders':
      return page('orders', 'Orders in flight', ordersPage(counted((await live.fresh()).list())));
    case '/days': {
      const all = (await live.fresh()).list();
      return page('days', 'The last days', daysPage(all, counted(all), Date.now()));
    }
    case '/input': {
      const all = (await live.fresh()).list();
      const r = all.find((x) => x.id === q('id'));
      if (!r) return plain(res, 404, 'no such input (it may have moved: go back to the list)');
      const read = r.reports.json ? await readReport(r.reports.json) : undefined;
      const lines = await sourceLines(r.inputPath, linesWanted(read?.view));
      return page('input', r.name, inputPage(r, read?.view, read?.problem, lines, counted(all).spend.get(r.id)));
    }
    case '/file': {
      const r = (await live.fresh()).find(q('id') ?? '');
      const kind = (Object.keys(REPORT_SUFFIX) as ReportKind[]).find((k) => k === q('kind'));
      const path = kind && r?.reports[kind];
      if (!r || !kind || !path) return plain(res, 404, 'no such report');
      return download(res, path, kind);
    }
    default:
      return plain(res, 404, 'not found');
  }
}

async function download(res: ServerResponse, path: string, kind: ReportKind): Promise<void> {
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
}
