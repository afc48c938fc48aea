import diagnosticsChannel from 'node:diagnostics_channel';
import type { WatchMetrics } from './metrics.js';

/**
 * Counts the API client's HTTP requests from undici's diagnostics channels: no hook in the
 * client is needed and every request is seen, retries and token fetches included. Only
 * requests to `origins` (the configured API and auth hosts) are counted; nothing of the
 * request (paths, headers, bodies) is recorded but method and status, so no secret can leak.
 */

interface RequestLike {
  origin?: string | URL;
  method?: string;
}

/** Origins remembered by instrumentApi; any beyond are parsed each time. */
const MAX_KNOWN_ORIGINS = 64;

export function instrumentApi(metrics: WatchMetrics, origins: readonly string[]): () => void {
  const wanted = new Set(origins.map((o) => new URL(o).origin));
  const started = new WeakMap<object, number>();
  // Whether an origin, as undici gives it, is one of ours: remembered (a few hosts), where a
  // URL parsed for every request was most of this hook's time.
  const known = new Map<string, boolean>();
  const ours = (request: RequestLike): boolean => {
    if (request.origin === undefined) return false;
    const origin = String(request.origin);
    let yes = known.get(origin);
    if (yes === undefined) {
      yes = wanted.has(new URL(origin).origin);
      if (known.size < MAX_KNOWN_ORIGINS) known.set(origin, yes);
    }
    return yes;
  };

  const onCreate = (message: unknown): void => {
    const { request } = message as { request: RequestLike };
    if (ours(request)) started.set(request, performance.now());
  };
  const onHeaders = (message: unknown): void => {
    const { request, response } = message as { request: RequestLike; response: { statusCode: number } };
    const t0 = started.get(request);
    if (t0 === undefined) return;
    started.delete(request);
    const method = request.method ?? 'GET';
    metrics.apiRequests.inc({ method, status: String(response.statusCode) });
    metrics.apiDuration.observe({ method }, (performance.now() - t0) / 1000);
    if (response.statusCode >= 500) metrics.apiErrors.inc({ kind: 'http-5xx' });
    else if (response.statusCode === 429) metrics.apiErrors.inc({ kind: 'http-429' });
  };
  const onError = (message: unknown): void => {
    const { request, error } = message as { request: RequestLike; error: { code?: string; name?: string } };
    if (!started.has(request)) return;
    started.delete(request);
    metrics.apiRequests.inc({ method: request.method ?? 'GET', status: 'error' });
    metrics.apiErrors.inc({ kind: error?.code ?? error?.name ?? 'error' });
  };
  diagnosticsChannel.subscribe('undici:request:create', onCreate);
  diagnosticsChannel.subscribe('undici:request:headers', onHeaders);
  diagnosticsChannel.subscribe('undici:request:error', onError);
  return () => {
    diagnosticsChannel.unsubscribe('undici:request:create', onCreate);
    diagnosticsChannel.unsubscribe('undici:request:headers', onHeaders);
    diagnosticsChannel.unsubscribe('undici:request:error', onError);
  };
}
