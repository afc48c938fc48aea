import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ACCOUNTS } from './data/accounts.js';
import { REGIONS, type RegionCode, type RegionDef } from './data/regions.js';
import { json, problem, ProblemError, type ApiHandler, type Reply } from './handler.js';
import { applyArtwork, fetchArtwork } from './jobs/artwork-fetch.js';
import type { SharedWorld } from './persistence.js';
import { Router } from './router.js';
import { register as registerAccount } from './routes/account.js';
import { adminRouter, type AdminDeps } from './routes/admin.js';
import { register as registerAssets } from './routes/assets.js';
import { register as registerJobs } from './routes/jobs.js';
import { register as registerLookups } from './routes/lookups.js';
import { register as registerPriceCodes } from './routes/price-codes.js';
import { register as registerPromo } from './routes/promo.js';
import { register as registerStock } from './routes/stock.js';
import { statusHtml, statusJson } from './routes/status.js';

const MAX_BODY = 5 * 1024 * 1024;

export interface ServerDeps extends Omit<AdminDeps, 'calls'> {
  /** Client secrets by account name. */
  secrets: Map<string, string>;
  /** A persistent sandbox's state, shared through its store; absent: in memory only. */
  shared?: Pick<SharedWorld, 'read' | 'change'>;
}

/** The deps and the call counts of one server. */
type Deps = ServerDeps & AdminDeps;

const API = new Router<ApiHandler>();
for (const register of [
  registerPriceCodes,
  registerJobs,
  registerAssets,
  registerAccount,
  registerLookups,
  registerStock,
  registerPromo,
])
  register(API);
const ADMIN = adminRouter();

function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { ...(reply.headers ?? {}) };
  let payload: string | undefined;
  if (reply.status !== 204) {
    if (reply.raw !== undefined) payload = reply.raw;
    else if (reply.body !== undefined) payload = JSON.stringify(reply.body);
    if (payload !== undefined) headers['content-type'] = reply.contentType ?? 'application/json; charset=utf-8';
  }
  res.writeHead(reply.status, headers);
  res.end(payload);
}

/** The body, or null once it is over MAX_BODY (the rest is read and dropped). */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(null);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** One request, its body read. */
interface SandboxRequest {
  req: IncomingMessage;
  method: string;
  url: URL;
  /** The path's segments, still percent-encoded. */
  segments: string[];
  body: Buffer;
}

/** What a region request resolves to before any fault applies. */
interface Planned {
  /** The route key for call counts and fault rules. */
  key: string;
  run: () => Reply;
  /** Whether `run` reads or changes the world (then a persistent sandbox's store is involved). */
  onWorld: boolean;
}

/** One HTTP server for every region (by path prefix) plus the admin API under /_sandbox/. */
export function createSandboxServer(deps: ServerDeps) {
  const d: Deps = { ...deps, calls: new Map() };
  return createServer((req, res) => {
    handle(d, req, res).catch((err: unknown) => {
      send(
        res,
        problem(500, `Sandbox internal error: ${err instanceof Error ? err.message : String(err)}`, req.url ?? '/'),
      );
    });
  });
}

/**
 * Runs a handler of the API or the admin routes: directly for an in-memory sandbox; for a
 * persistent one after picking up what another process saved, and — for anything but a GET —
 * under the store's lock, answering only once what it changed is saved.
 */
async function onWorld(d: Deps, method: string, fn: () => Reply): Promise<Reply> {
  if (!d.shared) return fn();
  if (method === 'GET') {
    await d.shared.read();
    return fn();
  }
  return d.shared.change(fn);
}

async function handle(d: Deps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const segments = (req.url ?? '/').split('?')[0].split('/').filter(Boolean);
  const body = await readBody(req);
  if (body === null) return send(res, problem(413, 'The request body is too large.', url.pathname));
  const request: SandboxRequest = { req, method, url, segments, body };
  if (segments[0] === '_sandbox') return send(res, await answerAdmin(d, request));
  const region = REGIONS[segments[0] as RegionCode];
  if (!region)
    return send(
      res,
      problem(404, `No region '${segments[0] ?? ''}'. Regions: ${Object.keys(REGIONS).join(', ')}.`, url.pathname),
    );
  await answerWithFaults(d, request, planRegionRequest(d, request, region), res);
}

async function answerAdmin(d: Deps, { method, url, segments, body }: SandboxRequest): Promise<Reply> {
  const m = ADMIN.match(method, '/' + segments.slice(1).join('/'));
  if (m.kind !== 'found') return problem(404, `No admin route ${method} ${url.pathname}.`, url.pathname);
  let parsed: unknown = null;
  if (body.length) {
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return problem(400, 'The admin request body must be JSON.', url.pathname);
    }
  }
  const { route, params } = m.match;
  return onWorld(d, method, () => route.handler({ params, body: parsed, path: url.pathname }, d));
}

function planRegionRequest(d: Deps, request: SandboxRequest, region: RegionDef): Planned {
  const { method, url, segments } = request;
  const area = segments[1];
  const rest = '/' + segments.slice(2).join('/');
  if (area === 'api') return planApi(d, request, region, rest);
  if (area === 'auth' && rest === `/realms/${region.realm}/protocol/openid-connect/token` && method === 'POST')
    return { key: 'POST token', onWorld: false, run: () => tokenEndpoint(d, request, region.code) };
  if (area === 'status' && method === 'GET' && (rest === '/status.json' || rest === '/status')) {
    const page = rest === '/status.json' ? statusJson : statusHtml;
    return { key: `GET ${rest.slice(1)}`, onWorld: false, run: () => page(region, d.world.clock.now()) };
  }
  return unmatched(method, () => problem(404, `No route ${method} ${url.pathname}.`, url.pathname));
}

function unmatched(method: string, run: () => Reply): Planned {
  return { key: `${method} (unmatched)`, onWorld: false, run };
}

function planApi(d: Deps, { req, method, url, body }: SandboxRequest, region: RegionDef, rest: string): Planned {
  const m = API.match(method, rest);
  if (m.kind === 'method-not-allowed')
    return unmatched(method, () =>
      problem(405, `${method} is not allowed here.`, url.pathname, {}, { allow: m.allowed.join(', ') }),
    );
  if (m.kind !== 'found') return unmatched(method, () => problem(404, `No route ${method} ${rest}.`, url.pathname));
  const run = (): Reply => {
    const auth = d.tokens.verify(req.headers.authorization, region.code);
    if (!auth.ok)
      return problem(401, auth.reason, url.pathname, {}, { 'www-authenticate': 'Bearer error="invalid_token"' });
    return m.match.route.handler({
      world: d.world,
      region,
      account: auth.account,
      customer: d.world.customer(auth.account.customerId),
      params: m.match.params,
      query: url.searchParams,
      headers: req.headers,
      rawBody: body,
      path: url.pathname,
      url,
      now: d.world.clock.now(),
    });
  };
  return { key: `${method} ${m.match.route.template}`, onWorld: true, run };
}

/** Counts the call, applies the fault rules that fire for it and answers (or does not). */
async function answerWithFaults(
  d: Deps,
  { req, method, url, body }: SandboxRequest,
  planned: Planned,
  res: ServerResponse,
): Promise<void> {
  const { key } = planned;
  d.calls.set(key, (d.calls.get(key) ?? 0) + 1);
  const fault = d.faults.decide(key, key === 'POST /Jobs' ? jobsMode(body) : undefined);
  if (fault.delayMs > 0) await sleep(fault.delayMs);
  const action = fault.action;
  if (action?.kind === 'reset') {
    // Before acting: nothing happened on the server.
    req.socket.destroy();
    return;
  }
  if (action?.kind === 'status') {
    const headers: Record<string, string> =
      action.retryAfterSeconds !== null ? { 'retry-after': String(action.retryAfterSeconds) } : {};
    return send(res, problem(action.status, `Injected fault: ${action.status}.`, url.pathname, {}, headers));
  }
  let reply: Reply;
  try {
    reply = planned.onWorld ? await onWorld(d, method, planned.run) : planned.run();
  } catch (err) {
    if (err instanceof ProblemError) reply = err.reply;
    else throw err;
  }
  if (action?.kind === 'create-then-drop') {
    // The work is done (a job may exist now) but the caller never hears back.
    req.socket.destroy();
    return;
  }
  if (action?.kind === 'create-then-500') return send(res, problem(500, 'An unexpected error occurred.', url.pathname));
  send(res, reply);
  if (d.world.pendingArtwork.length > 0) {
    const fetching = fetchPendingArtwork(d);
    d.world.fetching.add(fetching);
    void fetching.finally(() => d.world.fetching.delete(fetching));
  }
}

/** The printer fetches the links of the jobs just created, then records what it got. */
async function fetchPendingArtwork(d: Deps): Promise<void> {
  for (const pending of d.world.pendingArtwork.splice(0)) {
    const fetched = await Promise.all(pending.links.map(fetchArtwork));
    await onWorld(d, 'POST', () => {
      applyArtwork(d.world, pending, fetched);
      return json({});
    }).catch(() => undefined);
  }
}

function tokenEndpoint(d: Deps, { req, body: raw, url }: SandboxRequest, region: RegionCode): Reply {
  const oauth = (status: number, error: string, description: string): Reply =>
    problem(status, description, url.pathname, { error, error_description: description });
  const ct = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (ct !== 'application/x-www-form-urlencoded')
    return oauth(400, 'invalid_request', 'The token request must be form-encoded (application/x-www-form-urlencoded).');
  const form = new URLSearchParams(raw.toString('utf8'));
  if (form.get('grant_type') !== 'client_credentials')
    return oauth(400, 'unsupported_grant_type', 'grant_type must be client_credentials.');
  const account = ACCOUNTS.find((a) => a.name === form.get('client_id') && a.region === region);
  if (!account || d.secrets.get(account.name) !== (form.get('client_secret') ?? ''))
    return oauth(401, 'invalid_client', 'Invalid client credentials.');
  const body = { ...d.tokens.issue(account), token_type: 'Bearer', scope: 'htorder-api' };
  return { status: 200, body, headers: { 'cache-control': 'no-store' } };
}

/** Whether a POST /Jobs body is a validateOnly dry run (for fault rules with `when`). */
function jobsMode(body: Buffer): 'create' | 'validate' {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { validateOnly?: unknown };
    return parsed?.validateOnly === true ? 'validate' : 'create';
  } catch {
    return 'create';
  }
}
