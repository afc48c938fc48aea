import diagnosticsChannel from 'node:diagnostics_channel';
import type { WatchMetrics } from './metrics.js';

interface RequestLike {
  origin?: string | URL;
  method?: string;
}

/**
 * Counts the API client's HTTP requests from undici's diagnostics channels: no hook in the
 * client is needed and every request is seen, retries and token fetches included. Only
 * requests to `origins` (the configured API and auth hosts) are counted; nothing of the
 * request (paths, headers, bodies) is recorded but method and status, so no secret can leak.
 */
export function instrumentApi(metrics: WatchMetrics, origins: readonly string[]): () => void {
  const wanted = new Set(origins.map((o) => new URL(o).origin));
  const started = new WeakMap<object, number>();
  const ours = (request: RequestLike): boolean =>
    request.origin !== undefined && wanted.has(new URL(String(request.origin)).origin);

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
  const channels = Object.entries({
    'undici:request:create': onCreate,
    'undici:request:headers': onHeaders,
    'undici:request:error': onError,
  });
  for (const [name, listener] of channels) diagnosticsChannel.subscribe(name, listener);
  return () => {
    for (const [name, listener] of channels) diagnosticsChannel.unsubscribe(name, listener);
  };
}
