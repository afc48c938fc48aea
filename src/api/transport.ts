import { setImmediate as checkPhase } from 'node:timers/promises';
import pLimit, { type LimitFunction } from 'p-limit';
import { Agent } from 'undici';
import type { ApiConfig } from '../core/config/api-config.js';
import type { TokenProvider } from './auth.js';
import { ApiError } from './errors.js';
import { type ClientDeps, sendHttp, type HttpResponse, USER_AGENT } from './http.js';
import { backoffDelay } from '../core/backoff.js';
import { isRetryableStatus, isRetrySafe, parseRetryAfter, retryBackoff } from './retry-policy.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number)[];

export interface RequestSpec {
  method: HttpMethod;
  /** Relative to the API host, path parameters already percent-encoded: `/Jobs/123`. */
  path: string;
  /** Undefined and null values are left out; arrays are joined with commas (the API's list form). */
  query?: Record<string, QueryValue>;
  /** Sent as JSON. */
  body?: unknown;
  /** Default true. The status page is public and takes no token. */
  auth?: boolean;
  /** Host to use instead of the API host (the status page has its own). */
  baseUrl?: string;
  /** Overrides the retry-safety rule of retry-policy.ts (e.g. to forbid retries). */
  retrySafe?: boolean;
}

/** A keep-alive connection pool per origin, with the configured connect timeout. */
export function createDispatcher(config: Pick<ApiConfig, 'timeouts' | 'concurrency'>): Agent {
  return new Agent({
    connect: { timeout: config.timeouts.connectMs },
    headersTimeout: config.timeouts.headersMs,
    bodyTimeout: config.timeouts.bodyMs,
    keepAliveTimeout: 10_000,
    // Enough sockets for the pipeline's parallel jobs, not unbounded.
    connections: Math.max(4, config.concurrency * 2),
  });
}

/**
 * Sends API calls: adds the bearer token and standard headers, retries what is safe to
 * retry, turns every non-2xx answer into an ApiError. One 401 drops the token and the call
 * is repeated once with a fresh one, whatever the method: a 401 means the server did not
 * act on the request.
 */
export class Transport {
  /**
   * At most `config.concurrency` requests in flight to the API, whoever sends them. The
   * pipeline may work on more jobs than that at once (their local ledger writes overlap with
   * other jobs' calls), but the API never sees more than this many requests at a time.
   * Waiting for a retry or a token holds no slot.
   */
  private readonly inFlight: LimitFunction;

  constructor(
    private readonly config: ApiConfig,
    private readonly tokens: TokenProvider,
    private readonly deps: ClientDeps,
  ) {
    this.inFlight = pLimit(Math.max(1, config.concurrency));
  }

  /** The parsed body of a 2xx answer (null for 204). */
  async request<T>(spec: RequestSpec): Promise<T> {
    return (await this.send(spec)).body as T;
  }

  /** The whole 2xx answer; non-2xx answers throw ApiError. */
  async send(spec: RequestSpec): Promise<HttpResponse> {
    const route = spec.path;
    const retrySafe = spec.retrySafe ?? isRetrySafe({ method: spec.method, path: spec.path, body: spec.body });
    const { retry, logger, now } = this.deps;
    let previous500s = 0;
    for (let attempt = 1; ; attempt++) {
      const started = now();
      let res: HttpResponse;
      let delay: number;
      try {
        res = await this.sendAuthorised(spec, route);
      } catch (err) {
        // The token provider has already retried and backed off; retrying here would multiply its attempts.
        if (err instanceof TokenFailure) throw err.error;
        const e = err as ApiError;
        const transient = e.kind === 'network' || e.kind === 'timeout';
        if (!retrySafe || !transient || attempt >= retry.maxAttempts) {
          logger.debug({ method: spec.method, route, kind: e.kind, code: e.code, attempt }, 'API call failed');
          throw e;
        }
        delay = backoffDelay(attempt, retryBackoff(retry), this.deps.random);
        logger.warn({ method: spec.method, route, code: e.code, attempt, delayMs: delay }, 'API call failed; retrying');
        await this.deps.sleep(delay);
        continue;
      }
      logger.debug(
        { method: spec.method, route, status: res.status, attempt, durationMs: now() - started },
        'API call',
      );
      if (res.status >= 200 && res.status < 300) return res;
      const retryAfterMs = parseRetryAfter(res.headers['retry-after'], now(), retry.maxRetryAfterMs);
      if (!retrySafe || attempt >= retry.maxAttempts || !isRetryableStatus(res.status, previous500s)) {
        throw new ApiError({
          kind: res.status === 401 && spec.auth !== false ? 'auth' : 'http',
          method: spec.method,
          route,
          status: res.status,
          body: res.body,
          mayHaveReachedServer: true,
          retryAfterMs,
        });
      }
      if (res.status === 500) previous500s++;
      delay = retryAfterMs ?? backoffDelay(attempt, retryBackoff(retry), this.deps.random);
      logger.warn(
        { method: spec.method, route, status: res.status, attempt, delayMs: delay },
        'API call failed; retrying',
      );
      await this.deps.sleep(delay);
    }
  }

  /** One attempt, plus at most one repeat after a 401 with a freshly fetched token. */
  private async sendAuthorised(spec: RequestSpec, route: string): Promise<HttpResponse> {
    if (spec.auth === false) return this.sendOnce(spec, route, null);
    const token = await this.token();
    const res = await this.sendOnce(spec, route, token);
    if (res.status !== 401) return res;
    this.deps.logger.info({ method: spec.method, route }, 'token refused (401); fetching a new one and retrying once');
    this.tokens.invalidate(token);
    const fresh = await this.token();
    return this.sendOnce(spec, route, fresh);
  }

  private async token(): Promise<string> {
    try {
      return await this.tokens.get();
    } catch (err) {
      throw new TokenFailure(err as ApiError);
    }
  }

  private async sendOnce(spec: RequestSpec, route: string, token: string | null): Promise<HttpResponse> {
    const { config } = this;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': USER_AGENT,
      'x-application-name': config.appName,
    };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    const url = buildUrl(spec.baseUrl ?? config.baseUrl, spec.path, spec.query);
    const res = await this.inFlight(() =>
      sendHttp({
        dispatcher: this.deps.dispatcher,
        method: spec.method,
        url,
        headers,
        body,
        timeouts: config.timeouts,
        route,
        maxResponseBytes: config.maxResponseBytes,
      }),
    );
    // Speed (`npm run bench`, run against a bare client): the answer goes back in the event
    // loop's check phase, after undici's own immediate. undici writes a request on a reused
    // keep-alive connection only in that phase, and the call that took this one's slot has just
    // been dispatched: handed back at once, this job's ledger and report work would go first
    // and hold that request back.
    await checkPhase();
    return res;
  }
}

/** Marks a failure to get a token, so the call loop does not retry it a second time. */
class TokenFailure {
  constructor(readonly error: ApiError) {}
}

export function buildUrl(base: string, path: string, query?: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    params.append(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const qs = params.toString();
  return `${base.replace(/\/+$/, '')}${path.startsWith('/') ? '' : '/'}${path}${qs ? `?${qs}` : ''}`;
}
