import type { Dispatcher } from 'undici';
import type { ApiConfig } from '../core/config/api-config.js';
import { silentLogger, type Logger } from '../core/log/logger.js';
import { type TokenCache, TokenProvider } from './auth.js';
import type { HttpResponse } from './http.js';
import { accountApi, type AccountApi } from './resources/account.js';
import { assetsApi, type AssetsApi } from './resources/assets.js';
import { jobsApi, type JobsApi } from './resources/jobs.js';
import { lookupsApi, type LookupsApi } from './resources/lookups.js';
import { priceCodesApi, type PriceCodesApi } from './resources/price-codes.js';
import { promoApi, type PromoApi } from './resources/promo.js';
import { statusApi, type StatusApi } from './resources/status.js';
import { stockApi, type StockApi } from './resources/stock.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
import { createDispatcher, Transport, type RequestSpec } from './transport.js';

export interface ApiClientOptions {
  logger?: Logger;
  /** Share a token cache between clients of the same account; default: a private one. */
  tokenCache?: TokenCache;
  retry?: Partial<RetryOptions>;
  /** Use this connection pool instead of creating one (it is then not closed by close()). */
  dispatcher?: Dispatcher;
  /** Clock for token expiry and Retry-After dates; tests pass a fake one. */
  now?: () => number;
  /** How waits happen; tests can record them. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** Who this client talks as: enough to key per-account state (ledger, caches), no secret. */
export interface AccountIdentity {
  baseUrl: string;
  authUrl: string;
  realm: string;
  clientId: string;
}

export interface ApiClient {
  readonly identity: AccountIdentity;
  readonly priceCodes: PriceCodesApi;
  readonly jobs: JobsApi;
  readonly assets: AssetsApi;
  readonly account: AccountApi;
  readonly lookups: LookupsApi;
  readonly stock: StockApi;
  readonly promo: PromoApi;
  readonly status: StatusApi;
  /** Any call by hand (used by `htorder api`): parsed 2xx body, ApiError otherwise. */
  request<T>(spec: RequestSpec): Promise<T>;
  /** Any call by hand, with status and headers of the 2xx answer. */
  send(spec: RequestSpec): Promise<HttpResponse>;
  /** Closes the connection pool (when the client created it). */
  close(): Promise<void>;
}

/** A typed client for one account of one region. */
export function createApiClient(config: ApiConfig, options: ApiClientOptions = {}): ApiClient {
  const ownDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createDispatcher(config);
  const deps = {
    dispatcher,
    logger: options.logger ?? silentLogger(),
    retry: { ...DEFAULT_RETRY, ...options.retry },
    now: options.now ?? Date.now,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    random: options.random,
  };
  const transport = new Transport(config, new TokenProvider(config, deps, options.tokenCache), deps);
  return {
    identity: { baseUrl: config.baseUrl, authUrl: config.authUrl, realm: config.realm, clientId: config.clientId },
    priceCodes: priceCodesApi(transport),
    jobs: jobsApi(transport),
    assets: assetsApi(transport),
    account: accountApi(transport),
    lookups: lookupsApi(transport),
    stock: stockApi(transport),
    promo: promoApi(transport),
    status: statusApi(transport, config.statusUrl),
    request: (spec) => transport.request(spec),
    send: (spec) => transport.send(spec),
    close: async () => {
      if (ownDispatcher) await dispatcher.close();
    },
  };
}
