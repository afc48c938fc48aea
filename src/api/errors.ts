import type { ValidationMessage } from './types.js';
import { StoreUnavailableError } from '../core/errors.js';
import { scrubSecretsDeep, scrubServerText } from '../core/log/redact.js';

/**
 * - `http`: the server answered with a non-2xx status (see `status`).
 * - `network`: the connection failed or broke (refused, DNS, reset, TLS).
 * - `timeout`: connect, response-headers or body timeout.
 * - `auth`: the credentials were refused (token endpoint said no, or the API still said
 *   401 after one fresh token). Nothing was decided; exit code 3 territory.
 */
export type ApiErrorKind = 'http' | 'network' | 'timeout' | 'auth';

export interface ApiErrorInit {
  kind: ApiErrorKind;
  method: string;
  /** Path relative to the API host, WITHOUT query string (query strings may carry signatures). */
  route: string;
  mayHaveReachedServer: boolean;
  status?: number | null;
  /** Parsed response body (JSON or text), when there was one. */
  body?: unknown;
  /** Low-level error code for network/timeout kinds (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT …). */
  code?: string | null;
  /** The server's Retry-After, in ms, when it sent one (429/503): callers that resend decide with it. */
  retryAfterMs?: number | null;
  /** Overrides the generated summary. */
  message?: string;
  cause?: unknown;
}

/**
 * The one error type of the API client. It carries the RFC 7807 fields, field `errors` and
 * job `validationMessages` when the server sent them, and says whether the request may have
 * reached the server: false only when it certainly did not (e.g. ECONNREFUSED, connect
 * timeout), which is what the exactly-once logic needs to decide between "retry" and
 * "search before resending".
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly kind: ApiErrorKind;
  readonly status: number | null;
  readonly method: string;
  readonly route: string;
  readonly mayHaveReachedServer: boolean;
  readonly code: string | null;
  readonly body: unknown;
  readonly retryAfterMs: number | null;
  // RFC 7807
  readonly type: string | null;
  readonly title: string | null;
  readonly detail: string | null;
  readonly instance: string | null;
  /** Validation errors keyed by field (400 from validation). */
  readonly errors: Record<string, string[]> | null;
  /** Job validation messages (400 from POST /Jobs). */
  readonly validationMessages: ValidationMessage[] | null;

  constructor(init: ApiErrorInit) {
    super('', init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status ?? null;
    this.method = init.method;
    this.route = init.route;
    this.mayHaveReachedServer = init.mayHaveReachedServer;
    this.code = init.code ?? null;
    // Server text is never trusted with secrets: a body that echoes the Authorization header, the
    // token or the client secret is scrubbed here, before any report, terminal or log sees it.
    this.body = init.body === undefined || init.body === null ? null : scrubSecretsDeep(init.body);
    this.retryAfterMs = init.retryAfterMs ?? null;
    const b = isRecord(this.body) ? this.body : {};
    this.type = str(b.type);
    this.title = str(b.title);
    this.detail = str(b.detail);
    this.instance = str(b.instance);
    this.errors = isRecord(b.errors) ? normaliseFieldErrors(b.errors) : null;
    this.validationMessages = Array.isArray(b.validationMessages)
      ? b.validationMessages
          .filter(isRecord)
          .map((m) => ({ errorCode: String(m.errorCode ?? ''), message: String(m.message ?? '') }))
      : null;
    // Server text can echo URLs we sent (artwork links: their query strings go) and secrets.
    this.message = scrubServerText(init.message ?? this.summary());
  }

  /** `POST /Jobs: 400 Bad Request: detail; field: message; [code] message`. */
  private summary(): string {
    const head = `${this.method} ${this.route}`;
    if (this.kind !== 'http' && this.status === null) {
      return `${head}: ${this.kind === 'timeout' ? 'timed out' : 'network error'}${this.code ? ` (${this.code})` : ''}`;
    }
    const parts: string[] = [];
    if (this.title) parts.push(this.title);
    if (this.detail && this.detail !== this.title) parts.push(this.detail);
    if (!this.title && !this.detail && typeof this.body === 'string' && this.body.trim() !== '') {
      parts.push(this.body.trim().slice(0, 300));
    }
    for (const [field, msgs] of Object.entries(this.errors ?? {})) parts.push(`${field}: ${msgs.join(', ')}`);
    for (const m of this.validationMessages ?? [])
      parts.push(m.errorCode ? `[${m.errorCode}] ${m.message}` : m.message);
    return `${head}: ${this.status ?? this.kind}${parts.length ? `: ${parts.join('; ')}` : ''}`;
  }

  /** The problem details as a plain object (for `htorder api` stderr and reports). */
  toProblem(): Record<string, unknown> {
    if (isRecord(this.body)) return this.body;
    return {
      type: null,
      title: this.kind === 'http' ? null : this.kind,
      status: this.status,
      detail: this.message,
      instance: this.route,
    };
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

/**
 * Why a run could not start on the API, in words: the host and the cause of a network error or
 * timeout (the error's message names them), credentials refused, or the API's own answer.
 */
export function unavailableReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const store = storeUnavailable(err);
  if (store !== undefined) return store;
  if (!(err instanceof ApiError)) return `cannot reach the API or the credentials were refused: ${message}`;
  if (err.kind === 'auth') return `the credentials were refused: ${message}`;
  if (err.kind === 'http') return `the API turned the request away: ${message}`;
  return `cannot reach the API: ${message}`;
}

/**
 * Why the ledger's store could not be reached, or undefined when `err` is something else: the
 * one test of "the store is away" (pg-database.ts turns every way a database can be away into
 * a StoreUnavailableError). Such an error, wherever it is raised, leaves its input undecided:
 * `unavailable`, exit 3, retried later.
 */
export function storeUnavailable(err: unknown): string | undefined {
  return err instanceof StoreUnavailableError ? err.message : undefined;
}

/** No such record, or it belongs to another account (the API does not distinguish). */
export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.kind === 'http' && err.status === 404;
}

/** Awaits `promise`; a 404 becomes null, other errors pass through. `await orNull(client.jobs.get(7))`. */
export async function orNull<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function normaliseFieldErrors(errors: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(errors)) out[k] = Array.isArray(v) ? v.map(String) : [String(v)];
  return out;
}

/** ApiError.code of an answer whose shape the client cannot use. */
export const UNUSABLE_ANSWER_CODE = 'UNUSABLE_ANSWER';

/**
 * A 2xx answer the client cannot use (a job without a job number, a page that does not move):
 * an API fault naming the call, which a caller treats as "nothing was learnt", never as an
 * empty or a successful answer.
 */
export function unusableAnswer(method: string, route: string, why: string): ApiError {
  return new ApiError({
    kind: 'http',
    method,
    route,
    code: UNUSABLE_ANSWER_CODE,
    mayHaveReachedServer: true,
    message: `${method} ${route}: the answer cannot be used (${why})`,
  });
}
