import type { Transport } from '../transport.js';
import type { PriceCodeDto, PriceCodeListQuery, PriceCodeQuery, ProcessesResponse } from '../types.js';

export interface PriceCodesApi {
  /** GET /PriceCodes/processes */
  processes(): Promise<ProcessesResponse>;
  /** GET /PriceCodes/price-codes. Codes with metadata attributes (custom sizes) are absent from this list. */
  list(query?: PriceCodeListQuery): Promise<PriceCodeDto[]>;
  /** GET /PriceCodes/{priceCode}; `dgX`/`dgY`/`stitches` are required for custom-size codes. */
  get(priceCode: string, query?: PriceCodeQuery): Promise<PriceCodeDto>;
}

export function priceCodesApi(t: Transport): PriceCodesApi {
  return {
    processes: () => t.request({ method: 'GET', path: '/PriceCodes/processes' }),
    list: (query = {}) => t.request({ method: 'GET', path: '/PriceCodes/price-codes', query: { ...query } }),
    // Price codes contain `"` and spaces: always percent-encode the path segment.
    get: (priceCode, query = {}) =>
      t.request({ method: 'GET', path: `/PriceCodes/${encodeURIComponent(priceCode)}`, query: { ...query } }),
  };
}
