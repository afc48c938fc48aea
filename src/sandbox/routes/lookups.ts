import type { CountryListResponse, StateListResponse } from '../../api/types.js';
import { json, type ApiHandler } from '../handler.js';
import { COUNTRIES, JOB_STATUSES, PROCESS_CODES, SIZE_SETS, STATES } from '../data/lookups.js';
import type { Router } from '../router.js';

export function register(r: Router<ApiHandler>): void {
  r.add('GET', '/Lookups/countries', (ctx) =>
    json({ countries: [...COUNTRIES], defaultCountry: ctx.region.defaultCountry } satisfies CountryListResponse),
  );
  r.add('GET', '/Lookups/countries/{countryCode}/states', (ctx) => {
    const cc = ctx.params.countryCode.toUpperCase();
    return json({ countryCode: cc, states: STATES[cc] ?? [] } satisfies StateListResponse);
  });
  r.add('GET', '/Lookups/job-statuses', () => json(JOB_STATUSES));
  r.add('GET', '/Lookups/process-codes', () => json([...PROCESS_CODES].sort((a, b) => a.rank - b.rank)));
  r.add('GET', '/Lookups/size-sets', () => json(SIZE_SETS));
}
