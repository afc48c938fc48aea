import type { Transport } from '../transport.js';
import type { PromoValidationResult } from '../types.js';

export interface PromoApi {
  /** GET /promocode/validate/{code}. Answers 200 even for an invalid code: check `isValid`. */
  validate(code: string, query?: { processCodes?: string | readonly string[] }): Promise<PromoValidationResult>;
}

export function promoApi(t: Transport): PromoApi {
  return {
    validate: (code, query = {}) =>
      t.request({
        method: 'GET',
        path: `/promocode/validate/${encodeURIComponent(code)}`,
        query: { processCodes: query.processCodes },
      }),
  };
}
