import type { Transport } from '../transport.js';
import type { StatusPage } from '../types.js';

export interface StatusApi {
  /** {status_url}/status.json: the provider's monitoring for the region (shape not shown in the spec). */
  json(): Promise<StatusPage>;
  /** {status_url}/status: the human page, as text. */
  page(): Promise<string>;
}

/**
 * The status page lives on its own host and needs no token. Without a status URL its calls
 * fail with a plain Error: how the user supplies one (flag, variable, profile key) is for
 * the configuration layer to say, not the client.
 */
export function statusApi(t: Transport, statusUrl: string | null): StatusApi {
  const base = (): string => {
    if (statusUrl === null) throw new Error('no status page URL configured (ApiConfig.statusUrl is null)');
    return statusUrl;
  };
  return {
    json: () => t.request({ method: 'GET', path: '/status.json', baseUrl: base(), auth: false }),
    page: async () => {
      const body = await t.request<unknown>({ method: 'GET', path: '/status', baseUrl: base(), auth: false });
      return typeof body === 'string' ? body : JSON.stringify(body);
    },
  };
}
