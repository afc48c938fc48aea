import type { Transport } from '../transport.js';
import type { StockItem, StockItemQuery, StockListQuery, StockShippingConfig } from '../types.js';

export interface StockApi {
  /** GET /Stock */
  list(query?: StockListQuery): Promise<StockItem[]>;
  /** GET /Stock/{code}: a stock code or a variant code; includes `shippingConfigs`. */
  get(code: string, query?: StockItemQuery): Promise<StockItem>;
  /** GET /stock/{stockItemId}/shipping */
  shippingForItem(stockItemId: number): Promise<StockShippingConfig[]>;
  /** GET /stock/shipping?market=… (`market` is required in practice: omitting it yields 400). */
  shipping(query: { market: string }): Promise<StockShippingConfig[]>;
}

export function stockApi(t: Transport): StockApi {
  return {
    list: (query = {}) => t.request({ method: 'GET', path: '/Stock', query: { ...query } }),
    get: (code, query = {}) =>
      t.request({ method: 'GET', path: `/Stock/${encodeURIComponent(code)}`, query: { ...query } }),
    // Lower-case `/stock` here is the spec's spelling for the shipping endpoints.
    shippingForItem: (id) => t.request({ method: 'GET', path: `/stock/${encodeURIComponent(String(id))}/shipping` }),
    shipping: (query) => t.request({ method: 'GET', path: '/stock/shipping', query: { market: query.market } }),
  };
}
