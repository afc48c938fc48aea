import type { ApiConfig } from '../core/config/api-config.js';
import { redactUrl, rememberSecret } from '../core/log/redact.js';
import { ApiError } from './errors.js';
import { type ClientDeps, sendHttp, USER_AGENT } from './http.js';
import { backoffDelay } from '../core/backoff.js';
import { isRetryableStatus, retryBackoff } from './retry-policy.js';

export interface CachedToken {
  accessToken: string;
  /** Epoch ms at which the token stops being handed out (expiry minus the margin). */
  refreshAt: number;
}

/**
 * Tokens keyed by (auth URL, realm, client id): one account's token can never be handed to
 * another account's calls. A client owns a fresh cache unless the caller passes one in
 * (e.g. a daemon recreating clients for the same account).
 */
export class TokenCache extends Map<string, CachedToken> {
  static key(authUrl: string, realm: string, clientId: string): string {
    return JSON.stringify([authUrl, realm, clientId]);
  }
}

/**
 * OAuth2 client-credentials tokens for one account. Reuses the cached token until shortly
 * before expiry; concurrent callers share one in-flight request; after a failed token
 * request the next attempt waits out an exponential backoff, because the spec warns that
 * token-request loops lead to rate limiting.
 */
export class TokenProvider {
  private readonly key: string;
  private inFlight: Promise<string> | null = null;
  private consecutiveFailures = 0;
  private notBefore = 0;
  /** For error values and logs: no host, no secret. */
  private readonly route: string;

  constructor(
    private readonly config: Pick<ApiConfig, 'authUrl' | 'realm' | 'clientId' | 'clientSecret' | 'timeouts'>,
    private readonly deps: ClientDeps,
    private readonly cache = new TokenCache(),
  ) {
    this.key = TokenCache.key(config.authUrl, config.realm, config.clientId);
    rememberSecret(config.clientSecret, 'configured');
    this.route = `/realms/${encodeURIComponent(config.realm)}/protocol/openid-connect/token`;
  }

  /** A valid access token: the cached one, or a fresh one. */
  async get(): Promise<string> {
    const cached = this.cache.get(this.key);
    if (cached && this.deps.now() < cached.refreshAt) return cached.accessToken;
    if (!this.inFlight) {
      this.inFlight = this.fetchWithBackoff().finally(() => {
        this.inFlight = null;
      });
    }
    return this.inFlight;
  }

  /**
   * Drops `token` after the API refused it (401). Only that token: if another caller has
   * already replaced it, the newer one stays.
   */
  invalidate(token: string): void {
    if (this.cache.get(this.key)?.accessToken === token) this.cache.delete(this.key);
  }

  private async fetchWithBackoff(): Promise<string> {
    const wait = this.notBefore - this.deps.now();
    if (wait > 0) await this.deps.sleep(wait);
    try {
      const token = await this.fetchWithRetries();
      this.consecutiveFailures = 0;
      this.notBefore = 0;
      return token;
    } catch (err) {
      this.consecutiveFailures++;
      this.notBefore =
        this.deps.now() + backoffDelay(this.consecutiveFailures, retryBackoff(this.deps.retry), this.deps.random);
      throw err;
    }
  }

  private async fetchWithRetries(): Promise<string> {
    let previous500s = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.fetchOnce();
      } catch (err) {
        const e = err as ApiError;
        const transient =
          e.kind === 'network' ||
          e.kind === 'timeout' ||
          (e.status !== null && isRetryableStatus(e.status, previous500s));
        if (e.status === 500) previous500s++;
        if (!transient || attempt >= this.deps.retry.maxAttempts) throw e;
        const delay = backoffDelay(attempt, retryBackoff(this.deps.retry), this.deps.random);
        this.deps.logger.warn(
          {
            route: 'token',
            authUrl: redactUrl(this.config.authUrl),
            status: e.status,
            code: e.code,
            attempt,
            delayMs: delay,
          },
          'token request failed; retrying',
        );
        await this.deps.sleep(delay);
      }
    }
  }

  private async fetchOnce(): Promise<string> {
    const startedAt = this.deps.now();
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.config.clientId,
      client_secret: this.config.clientSecret,
    }).toString();
    const res = await sendHttp({
      dispatcher: this.deps.dispatcher,
      method: 'POST',
      url: `${this.config.authUrl}${this.route}`,
      route: this.route,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        'user-agent': USER_AGENT,
      },
      body: form,
      timeouts: this.config.timeouts,
    });
    // Kind `auth`, not `http`: whatever the token host says, no API call was decided.
    const refused = (message: string, body?: unknown): ApiError =>
      new ApiError({
        kind: 'auth',
        method: 'POST',
        route: this.route,
        status: res.status,
        body,
        mayHaveReachedServer: true,
        message,
      });
    if (res.status === 400 || res.status === 401 || res.status === 403) {
      // OAuth error bodies carry `error` / `error_description`; neither holds the secret.
      const b = (typeof res.body === 'object' && res.body !== null ? res.body : {}) as Record<string, unknown>;
      const reason = [b.error, b.error_description].filter((x) => typeof x === 'string').join(': ');
      throw refused(
        `token request for client "${this.config.clientId}" refused (${res.status}${reason ? ` ${reason}` : ''}); check the client id, secret, realm and region`,
        res.body,
      );
    }
    if (res.status < 200 || res.status >= 300)
      throw refused(`token request failed with status ${res.status}`, res.body);
    const body = res.body as { access_token?: unknown; expires_in?: unknown } | null;
    if (body && typeof body.access_token === 'string') rememberSecret(body.access_token);
    if (!body || typeof body.access_token !== 'string' || body.access_token === '')
      throw refused('token response carried no access_token');
    const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 600;
    this.cache.set(this.key, {
      accessToken: body.access_token,
      refreshAt: startedAt + (expiresIn - refreshMargin(expiresIn)) * 1000,
    });
    this.deps.logger.debug({ route: 'token', expiresIn }, 'obtained access token');
    return body.access_token;
  }
}

/**
 * Seconds before expiry at which a token is replaced: the advised one minute, but at most
 * a tenth of the lifetime so short-lived tokens (tests use a few seconds) are still reused.
 */
export function refreshMargin(expiresInSeconds: number): number {
  return Math.min(60, expiresInSeconds / 10);
}
