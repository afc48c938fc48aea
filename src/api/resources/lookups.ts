import type { Transport } from '../transport.js';
import type { CountryListResponse, JobStatus, ProcessCode, SizeSet, StateListResponse } from '../types.js';

/** Reference data. New values appear over time: callers must not hardcode them. */
export interface LookupsApi {
  /** GET /Lookups/countries */
  countries(): Promise<CountryListResponse>;
  /** GET /Lookups/countries/{countryCode}/states (ISO2; empty `states` when the country has none). */
  states(countryCode: string): Promise<StateListResponse>;
  /** GET /Lookups/job-statuses */
  jobStatuses(): Promise<JobStatus[]>;
  /** GET /Lookups/process-codes (ordered by rank). */
  processCodes(): Promise<ProcessCode[]>;
  /** GET /Lookups/size-sets */
  sizeSets(): Promise<SizeSet[]>;
}

export function lookupsApi(t: Transport): LookupsApi {
  return {
    countries: () => t.request({ method: 'GET', path: '/Lookups/countries' }),
    states: (countryCode) =>
      t.request({ method: 'GET', path: `/Lookups/countries/${encodeURIComponent(countryCode)}/states` }),
    jobStatuses: () => t.request({ method: 'GET', path: '/Lookups/job-statuses' }),
    processCodes: () => t.request({ method: 'GET', path: '/Lookups/process-codes' }),
    sizeSets: () => t.request({ method: 'GET', path: '/Lookups/size-sets' }),
  };
}
