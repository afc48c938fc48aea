import { describe, expect, it } from 'vitest';
import type { EarliestShipDate } from '../../../src/api/types.js';
import { checkDateDue, earliestLocalDate } from '../../../src/resolve/preflight/job-rules.js';
import { echoSources } from '../../support/api-fixtures.js';

describe('checkDateDue', () => {
  const earliest: EarliestShipDate = {
    shippingDateUtc: '2026-03-10T22:00:00Z',
    shippingDateLocal: '2026-03-11T09:00:00',
    timezone: 'Pacific/Auckland',
    dateExclusions: [],
  };

  it('takes the local calendar date of the earliest ship date', () => {
    expect(earliestLocalDate(earliest)).toBe('2026-03-11');
  });

  it.each([
    [undefined, 0],
    ['2026-03-11', 0],
    ['2026-04-01', 0],
    ['2026-03-10', 1],
    ['2025-12-31', 1],
  ])('dateDue %s → %i warning(s)', (dateDue, n) => {
    const out = checkDateDue(dateDue, earliest, 4, echoSources);
    expect(out).toHaveLength(n);
    if (n) {
      expect(out[0]).toMatchObject({ severity: 'warning', code: 'dateDue.before-earliest', field: 'jobs[4].dateDue' });
      expect(out[0].message).toBe(
        `dateDue ${dateDue} is before the earliest ship date 2026-03-11; the API will move the job to 2026-03-11`,
      );
    }
  });
});
