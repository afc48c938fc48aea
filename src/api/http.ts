import { type Dispatcher, request } from 'undici';
import type { Timeouts } from '../core/config/api-config.js';
import type { Logger } from '../core/log/logger.js';
import { VERSION } from '../core/version.js';
import { ApiError } from './errors.js';
import type { RetryOptions } from './retry-policy.js';

export const USER_AGENT = `htorder/${VERSION}`;

/** What the token provider and the transport share: the connection pool, the log, the retry policy, the clock. */
export interface ClientDeps {
  dispatcher: Dispatcher;
  logger: Logger;
  retry: RetryOptions;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random?: () => number;
}

/** One HTTP exchange as the client sees it: status, headers and the parsed body. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** JSON when the body parses as JSON, else the text; null when empty. */
  body: unknown;
}

export interface HttpRequest {
  dispatcher: Dispatcher;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'HEAD';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** `deadlineMs`: the whole exchange, from sending to the last body byte; default DEFAULT_DEADLINE_MS. */
  timeouts: Timeouts;
  /** For error values: method and route (path without query) as the caller names them. */
  route: string;
  /** Largest body read; default DEFAULT_MAX_RESPONSE_BYTES. */
  maxResponseBytes?: number;
}

/**
 * An answer may trickle (one byte every few seconds never trips the between-chunks timeout)
 * or be huge: every exchange has an overall deadline and a size cap, so neither can hold a
 * run or its memory. Generous: the largest answers (active-job pages, price-code lists) are
 * a few megabytes and come in seconds.
 */
export const DEFAULT_DEADLINE_MS = 300_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Codes of the two limits above, in ApiError.code. */
export const DEADLINE_CODE = 'DEADLINE_EXCEEDED';
export const TOO_LARGE_CODE = 'RESPONSE_TOO_LARGE';

/**
 * Sends one request and reads the whole body. Never retries; transport failures become an
 * ApiError of kind `network` or `timeout` with `mayHaveReachedServer` set from the failure
 * stage: errors raised while connecting mean the request was never sent.
 */
export async function sendHttp(req: HttpRequest): Promise<HttpResponse> {
  const deadlineMs = req.timeouts.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const maxBytes = req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort();
  }, deadlineMs);
  timer.unref?.();
  try {
    const res = await request(req.url, {
      dispatcher: req.dispatcher,
      method: req.method,
      headers: req.headers,
      body: req.body,
      headersTimeout: req.timeouts.headersMs,
      bodyTimeout: req.timeouts.bodyMs,
      signal: controller.signal,
    });
    const text = await readCapped(res.body, res.headers['content-length'], maxBytes, () =>
      tooLarge(req, res.statusCode, maxBytes),
    );
    return { status: res.statusCode, headers: res.headers, body: parseBody(text, res.headers['content-type']) };
  } catch (err) {
    if (expired && !(err instanceof ApiError)) {
      throw new ApiError({
        kind: 'timeout',
        method: req.method,
        route: req.route,
        code: DEADLINE_CODE,
        // Sent, and maybe acted on: the safe assumption for a POST.
        mayHaveReachedServer: true,
        message:
          `${req.method} ${req.route}: no complete answer within ${deadlineMs} ms ` +
          '(the server is too slow or is trickling its answer; setting requestDeadlineMs)',
        cause: err,
      });
    }
    throw transportError(err, req.method, req.route, hostOf(req.url));
  } finally {
    clearTimeout(timer);
  }
}

/** The body as text, refusing (and dropping the connection) past `maxBytes`, before it is all in memory. */
async function readCapped(
  body: Dispatcher.ResponseData['body'],
  contentLength: string | string[] | undefined,
  maxBytes: number,
  refuse: () => ApiError,
): Promise<string> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    throw refuse();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw refuse();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function tooLarge(req: HttpRequest, status: number, maxBytes: number): ApiError {
  return new ApiError({
    // An answer arrived (with this status) but is not read: not a transport failure, never retried.
    kind: 'http',
    method: req.method,
    route: req.route,
    status,
    code: TOO_LARGE_CODE,
    mayHaveReachedServer: true,
    message:
      `${req.method} ${req.route}: ${status} with an answer over ${maxBytes} bytes, not read ` +
      '(setting maxResponseBytes)',
  });
}

export function parseBody(text: string, contentType: string | string[] | undefined): unknown {
  if (text.trim() === '') return null;
  const ct = String(Array.isArray(contentType) ? contentType[0] : (contentType ?? ''));
  if (/json/i.test(ct) || /^\s*[[{"]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** Codes that can only happen before a single byte of the request left this machine. */
const BEFORE_SEND = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UND_ERR_INVALID_ARG',
]);
const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export function transportError(err: unknown, method: string, route: string, host?: string): ApiError {
  if (err instanceof ApiError) return err;
  const code = errorCode(err);
  const kind = code !== null && TIMEOUTS.has(code) ? 'timeout' : 'network';
  // Anything not known to happen before sending (resets, sockets closed mid-request,
  // header/body timeouts) is treated as possibly delivered: the safe assumption for POSTs.
  const mayHaveReachedServer = code === null ? true : !BEFORE_SEND.has(code);
  const message = host === undefined ? undefined : `${method} ${route}: ${transportCause(host, code, kind)}`;
  return new ApiError({ kind, method, route, code, mayHaveReachedServer, cause: err, ...(message ? { message } : {}) });
}

/** `host:port` of a request URL (never its path, query or user info), or '?' for one that does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '?';
  }
}

/** What a transport failure means, in words, naming the host and the code it came with. */
export function transportCause(host: string, code: string | null, kind: 'network' | 'timeout'): string {
  const tagged = (text: string) => `${text}${code ? ` (${code})` : ''}`;
  switch (code) {
    case 'ENOTFOUND':
      return tagged(`no such host: ${host} does not resolve (check the URL)`);
    case 'EAI_AGAIN':
      return tagged(`cannot resolve ${host} (the name server did not answer)`);
    case 'ECONNREFUSED':
      return tagged(`${host} refused the connection (nothing listens there)`);
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return tagged(`${host} closed the connection`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return tagged(`${host} cannot be reached from this machine (no route)`);
    case 'UND_ERR_CONNECT_TIMEOUT':
      return tagged(`no connection to ${host} in time (setting connectTimeoutMs)`);
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return tagged(`${host} did not answer in time (setting requestTimeoutMs)`);
    case 'CERT_HAS_EXPIRED':
      return tagged(`the TLS certificate of ${host} has expired`);
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return tagged(`the TLS certificate of ${host} is not trusted (self-signed or an unknown issuer)`);
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return tagged(`the TLS certificate of ${host} is for another name`);
    default:
      if (code !== null && /^ERR_SSL|^EPROTO$|TLS/.test(code)) return tagged(`the TLS handshake with ${host} failed`);
      return tagged(kind === 'timeout' ? `${host} did not answer in time` : `network error talking to ${host}`);
  }
}

function errorCode(err: unknown): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    // AggregateError (happy-eyeballs tried several addresses): take the first.
    const errors = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(errors) && errors.length) e = errors[0];
    else e = (e as { cause?: unknown }).cause;
  }
  return null;
}
