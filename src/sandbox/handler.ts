import { type IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import type { ProblemDetails } from '../api/types.js';
import type { AccountDef } from './data/accounts.js';
import type { RegionDef } from './data/regions.js';
import type { CustomerState, World } from './state.js';

/** Everything an API route handler may read. The account is already authenticated. */
export interface ApiContext {
  world: World;
  region: RegionDef;
  account: AccountDef;
  customer: CustomerState;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** The request path (RFC 7807 `instance`). */
  path: string;
  /** The absolute request URL (paging links). */
  url: URL;
  now: Date;
}

export type ApiHandler = (ctx: ApiContext) => Reply;

/** What a route handler answers; the server turns it into an HTTP response. */
export interface Reply {
  status: number;
  /** JSON-serialised unless `raw` is set; omitted for 204. */
  body?: unknown;
  /** Sent verbatim (e.g. the status HTML page). */
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export const json = (body: unknown, status = 200): Reply => ({ status, body });

/** An RFC 7807 problem reply (type, title, status, detail, instance), plus any extra members. */
export function problem(
  status: number,
  detail: string,
  instance: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Reply {
  const body: ProblemDetails = {
    type: `https://tools.ietf.org/html/rfc9110#status-${status}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    instance,
    ...extra,
  };
  return { status, body, contentType: 'application/problem+json', headers };
}

/** A 400 problem carrying `errors` keyed by field, the ASP.NET model-validation shape. */
export function fieldErrors(instance: string, errors: Record<string, string[]>): Reply {
  return problem(400, 'One or more validation errors occurred.', instance, { errors });
}

/** Thrown inside a handler to answer with a problem; caught by the server. */
export class ProblemError extends Error {
  constructor(readonly reply: Reply) {
    super(String((reply.body as ProblemDetails).detail));
  }
}

/**
 * Parses the request body as JSON, or throws the problem reply the API would send. The spec
 * lists four JSON content types for POST /Jobs and PATCH: application/json,
 * application/json-patch+json, text/json and application/*+json; anything else is a 415.
 */
export function readJson(ctx: ApiContext): { value: unknown; raw: string } {
  const ct = ctx.headers['content-type'];
  const type = ct?.split(';')[0].trim().toLowerCase() ?? '';
  if (type !== 'application/json' && type !== 'text/json' && !/^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type))
    throw new ProblemError(
      problem(415, `Content type '${ct ?? '(none)'}' is not supported; send application/json.`, ctx.path),
    );
  const raw = ctx.rawBody.toString('utf8');
  if (raw.trim() === '')
    throw new ProblemError(fieldErrors(ctx.path, { '': ['A non-empty request body is required.'] }));
  try {
    return { value: JSON.parse(raw), raw };
  } catch (err) {
    throw new ProblemError(fieldErrors(ctx.path, { $: [`The JSON value is invalid: ${(err as Error).message}`] }));
  }
}
