import { request, type Dispatcher } from 'undici';
import { ApiError } from './errors.js';
import type { Timeouts } from '../config/api-config.js';

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
  timeouts: Timeouts;
  /** For error values: method and route (path without query) as the caller names them. */
  route: string;
}

/**
 * Sends one request and reads the whole body. Never retries; transport failures become an
 * ApiError of kind `network` or `timeout` with `mayHaveReachedServer` set from the failure
 * stage: errors raised while connecting mean the request was never sent.
 */
export async function sendHttp(req: HttpRequest): Promise<HttpResponse> {
  try {
    const res = await request(req.url, {
      dispatcher: req.dispatcher,
      method: req.method,
      headers: req.headers,
      body: req.body,
      headersTimeout: req.timeouts.headersMs,
      bodyTimeout: req.timeouts.bodyMs,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: parseBody(text, res.headers['content-type']) };
  } catch (err) {
    throw transportError(err, req.method, req.route);
  }
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

export function transportError(err: unknown, method: string, route: string): ApiError {
  if (err instanceof ApiError) return err;
  const code = errorCode(err);
  const kind = code !== null && TIMEOUTS.has(code) ? 'timeout' : 'network';
  // Anything not known to happen before sending (resets, sockets closed mid-request,
  // header/body timeouts) is treated as possibly delivered: the safe assumption for POSTs.
  const mayHaveReachedServer = code === null ? true : !BEFORE_SEND.has(code);
  return new ApiError({ kind, method, route, code, mayHaveReachedServer, cause: err });
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
