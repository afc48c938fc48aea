import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { TokenResponse } from '../api/types.js';
import type { TokenStore } from './auth.js';
import type { ApiContext, ApiHandler } from './context.js';
import { accountDefs, type AccountDef } from './data/accounts.js';
import { REGIONS, type RegionCode, type RegionDef } from './data/regions.js';
import type { Faults } from './faults.js';
import { problem, ProblemError } from './problem.js';
import type { Reply } from './reply.js';
import { Router } from './router.js';
import { adminRouter, type AdminDeps } from './routes/admin.js';
import { register as registerAccount } from './routes/account.js';
import { register as registerAssets } from './routes/assets.js';
import { register as registerJobs } from './routes/jobs.js';
import { register as registerLookups } from './routes/lookups.js';
import { register as registerPriceCodes } from './routes/price-codes.js';
import { register as registerPromo } from './routes/promo.js';
import { register as registerStock } from './routes/stock.js';
import { statusHtml, statusJson } from './routes/status.js';
import type { SharedWorld } from './persistence.js';
import type { World } from './state.js';

const MAX_BODY = 5 * 1024 * 1024;

export interface ServerDeps {
  world: World;
  tokens: TokenStore;
  faults: Faults;
  /** Client secrets by account name. */
  secrets: Map<string, string>;
  info(): unknown;
  /** A persistent sandbox's state, shared through its store; absent: in memory only. */
  shared?: Pick<SharedWorld, 'read' | 'change'>;
}

function apiRouter(): Router<ApiHandler> {
  const r = new Router<ApiHandler>();
  for (const reg of [
    registerPriceCodes,
    registerJobs,
    registerAssets,
    registerAccount,
    registerLookups,
    registerStock,
    registerPromo,
  ])
    reg(r);
  return r;
}

const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));

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

/** The parts every request of one sandbox server shares. */
interface Sandbox {
  deps: ServerDeps;
  api: Router<ApiHandler>;
  admin: ReturnType<typeof adminRouter>;
  accounts: AccountDef[];
  /** Its `calls` count the requests by route key. */
  adminDeps: AdminDeps;
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
export function createSandboxServer(deps: ServerDeps): Server {
  const { world, tokens, faults, info } = deps;
  const sandbox: Sandbox = {
    deps,
    api: apiRouter(),
    admin: adminRouter(),
    accounts: accountDefs(),
    adminDeps: { world, tokens, faults, calls: new Map(), info },
  };
  return createServer((req, res) => {
    handle(sandbox, req, res).catch((err: unknown) => {
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
async function onWorld(deps: ServerDeps, method: string, fn: () => Reply): Promise<Reply> {
  if (!deps.shared) return fn();
  if (method === 'GET') {
    await deps.shared.read();
    return fn();
  }
  return deps.shared.change(fn);
}

async function handle(sandbox: Sandbox, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const segments = (req.url ?? '/').split('?')[0].split('/').filter(Boolean);
  const body = await readBody(req);
  if (body === null) return send(res, problem(413, 'The request body is too large.', url.pathname));
  const request: SandboxRequest = { req, method, url, segments, body };
  if (segments[0] === '_sandbox') return send(res, await answerAdmin(sandbox, request));
  const region = REGIONS[segments[0] as RegionCode];
  if (!region)
    return send(
      res,
      problem(404, `No region '${segments[0] ?? ''}'. Regions: ${Object.keys(REGIONS).join(', ')}.`, url.pathname),
    );
  await answerWithFaults(sandbox, request, planRegionRequest(sandbox, request, region), res);
}

async function answerAdmin(sandbox: Sandbox, { method, url, segments, body }: SandboxRequest): Promise<Reply> {
  const m = sandbox.admin.match(method, '/' + segments.slice(1).join('/'));
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
  return onWorld(sandbox.deps, method, () =>
    route.handler({ params, body: parsed, path: url.pathname }, sandbox.adminDeps),
  );
}

function planRegionRequest(sandbox: Sandbox, request: SandboxRequest, region: RegionDef): Planned {
  const { method, url, segments } = request;
  const area = segments[1];
  const rest = '/' + segments.slice(2).join('/');
  if (area === 'api') return planApi(sandbox, request, region, rest);
  if (area === 'auth' && rest === `/realms/${region.realm}/protocol/openid-connect/token` && method === 'POST')
    return { key: 'POST token', onWorld: false, run: () => tokenEndpoint(sandbox, request, region.code) };
  if (area === 'status' && method === 'GET' && (rest === '/status.json' || rest === '/status')) {
    const page = rest === '/status.json' ? statusJson : statusHtml;
    return { key: `GET ${rest.slice(1)}`, onWorld: false, run: () => page(region, sandbox.deps.world.clock.now()) };
  }
  return unmatched(method, () => problem(404, `No route ${method} ${url.pathname}.`, url.pathname));
}

function unmatched(method: string, run: () => Reply): Planned {
  return { key: `${method} (unmatched)`, onWorld: false, run };
}

function planApi(sandbox: Sandbox, request: SandboxRequest, region: RegionDef, rest: string): Planned {
  const { deps } = sandbox;
  const { req, method, url, body } = request;
  const m = sandbox.api.match(method, rest);
  if (m.kind === 'method-not-allowed')
    return unmatched(method, () => ({
      ...problem(405, `${method} is not allowed here.`, url.pathname),
      headers: { allow: m.allowed.join(', ') },
    }));
  if (m.kind !== 'found') return unmatched(method, () => problem(404, `No route ${method} ${rest}.`, url.pathname));
  const run = (): Reply => {
    const auth = deps.tokens.verify(req.headers.authorization, region.code);
    if (!auth.ok)
      return problem(401, auth.reason, url.pathname, {}, { 'www-authenticate': 'Bearer error="invalid_token"' });
    const ctx: ApiContext = {
      world: deps.world,
      region,
      account: auth.account,
      customer: deps.world.customer(auth.account.customerId),
      method,
      params: m.match.params,
      query: url.searchParams,
      headers: req.headers,
      rawBody: body,
      path: url.pathname,
      url,
      now: deps.world.clock.now(),
    };
    const out = m.match.route.handler(ctx);
    if (out instanceof Promise) throw new Error('async handlers are not supported');
    return out;
  };
  return { key: `${method} ${m.match.route.template}`, onWorld: true, run };
}

/** Counts the call, applies the fault rules that fire for it and answers (or does not). */
async function answerWithFaults(
  sandbox: Sandbox,
  { req, method, url, body }: SandboxRequest,
  planned: Planned,
  res: ServerResponse,
): Promise<void> {
  const { key } = planned;
  const { calls } = sandbox.adminDeps;
  calls.set(key, (calls.get(key) ?? 0) + 1);
  const fault = sandbox.deps.faults.decide(key, key === 'POST /Jobs' ? jobsMode(body) : undefined);
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
    reply = planned.onWorld ? await onWorld(sandbox.deps, method, planned.run) : planned.run();
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
}

function tokenEndpoint(sandbox: Sandbox, { req, body, url }: SandboxRequest, region: RegionCode): Reply {
  const oauth = (status: number, error: string, description: string): Reply =>
    problem(status, description, url.pathname, { error, error_description: description });
  const ct = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (ct !== 'application/x-www-form-urlencoded')
    return oauth(400, 'invalid_request', 'The token request must be form-encoded (application/x-www-form-urlencoded).');
  const form = new URLSearchParams(body.toString('utf8'));
  if (form.get('grant_type') !== 'client_credentials')
    return oauth(400, 'unsupported_grant_type', 'grant_type must be client_credentials.');
  const clientId = form.get('client_id') ?? '';
  const secret = form.get('client_secret') ?? '';
  const account = sandbox.accounts.find((a) => a.clientId === clientId && a.region === region);
  if (!account || sandbox.deps.secrets.get(account.name) !== secret)
    return oauth(401, 'invalid_client', 'Invalid client credentials.');
  const token: TokenResponse & Record<string, unknown> = {
    ...sandbox.deps.tokens.issue(account),
    token_type: 'Bearer',
    scope: 'htorder-api',
  };
  return { status: 200, body: token, headers: { 'cache-control': 'no-store' } };
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
