import { describe, expect, it } from 'vitest';
import { JOB_STATUSES } from '../../src/report/model.js';
import { money, moneyOf } from '../../src/ui/amounts.js';
import type { InputRecord } from '../../src/ui/drop-inputs.js';
import { dateText, instantText, statusClass } from '../../src/ui/pages/layout.js';
import { reportView } from '../../src/ui/report-view.js';
import { JOB_STATUS_LOOK, needsAction } from '../../src/ui/statuses.js';
import { submissions } from '../../src/ui/submissions.js';

/** An input as the pages get it, from a report's jobs (the fields submissions() reads). */
function input(id: string, at: number, jobs: Record<string, unknown>[]): InputRecord {
  const view = reportView({ command: 'watch', jobs });
  return { id, name: id, at, digest: view.jobs } as unknown as InputRecord;
}

const job = (n: number, status: string, cost: number, currency = 'USD') => ({
  orderNumber: `PO-${n}`,
  status,
  jobNumber: 700_000 + n,
  totalJobCost: cost,
  currency,
});

describe('each submission counted once', () => {
  it('gives a job dropped again to the input that submitted it, whatever order they are listed in', () => {
    const first = input('done/a.yaml', 1_000, [job(1, 'submitted', 10), job(2, 'submitted', 5.5)]);
    const again = input('done/a.2026.yaml', 2_000, [job(1, 'already-submitted', 10), job(2, 'already-submitted', 5.5)]);
    for (const inputs of [
      [first, again],
      [again, first],
    ]) {
      const subs = submissions(inputs);
      expect(subs.owned.map((s) => [s.input.id, s.job.jobNumber]).sort()).toEqual([
        ['done/a.yaml', 700_001],
        ['done/a.yaml', 700_002],
      ]);
      expect(moneyOf(subs.spend.get('done/a.yaml'))).toBe('15.50 USD');
      expect(subs.spend.get('done/a.2026.yaml')).toBeUndefined();
      expect(subs.copies.get('done/a.2026.yaml')?.get('already-submitted')).toBe(2);
      expect(subs.copies.get('done/a.yaml')).toBeUndefined();
    }
  });

  it('counts a job only ever reported as already-submitted once, with the earliest input', () => {
    const subs = submissions([
      input('b', 3_000, [job(3, 'already-submitted', 7)]),
      input('a', 2_000, [job(3, 'already-submitted', 7)]),
    ]);
    expect(subs.owned).toHaveLength(1);
    expect(subs.owned[0]?.input.id).toBe('a');
  });

  it("shows a job's spend with the currency another copy of its report recorded, when its owner's has none", () => {
    // A cron re-run by an older htorder rewrote the submitting input's report without the currency.
    const rewritten = input('drop/a.yaml', 1_000, [{ ...job(1, 'already-submitted', 10), currency: null }]);
    const copy = input('drop/b.yaml', 2_000, [job(1, 'already-submitted', 10)]);
    expect(moneyOf(submissions([rewritten, copy]).spend.get('drop/a.yaml'))).toBe('10.00 USD');
  });

  it('keeps jobs of the same number but another order apart, and currencies apart', () => {
    const subs = submissions([
      input('a', 1, [job(1, 'submitted', 10, 'USD'), { ...job(1, 'submitted', 4, 'EUR'), orderNumber: 'OTHER' }]),
    ]);
    expect(subs.owned).toHaveLength(2);
    expect(moneyOf(subs.spend.get('a'))).toBe('10.00 USD + 4.00 EUR');
  });
});

describe('what the pages say', () => {
  it('writes amounts with their currency, large ones grouped', () => {
    expect(money(5206.9, 'USD')).toBe('5,206.90 USD');
    expect(money(12, null)).toBe('12.00');
    expect(money(null)).toBe('–');
  });

  it('shows dates as dates', () => {
    expect(dateText('2026-12-01T00:00:00')).toBe('2026-12-01');
    expect(dateText('2026-12-01')).toBe('2026-12-01');
    expect(dateText('2026-12-01T14:30:00')).toBe('2026-12-01 14:30');
    expect(dateText('2026-12-01T14:30:00.123Z')).toBe('2026-12-01 14:30');
    expect(dateText('2026-12-01T00:00:00Z')).toBe('2026-12-01');
    expect(dateText('2026-12-01T01:00:00+02:00')).toBe('2026-11-30 23:00');
    expect(dateText('soon')).toBe('soon');
    expect(dateText(null)).toBe('');
    // A moment htorder stamped keeps its time, midnight too.
    expect(instantText('2026-12-01T00:00:00.000Z')).toBe('2026-12-01 00:00');
    expect(instantText('2026-12-01T14:30:05.120Z')).toBe('2026-12-01 14:30');
    expect(instantText('not a time')).toBe('not a time');
    expect(instantText(undefined)).toBe('');
  });

  it('recognises provider statuses that wait on the customer, and no others', () => {
    for (const s of ['On Hold', 'ON_HOLD', 'Artwork Pending', 'Awaiting Approval', 'Proof Sent', 'Queried'])
      expect(needsAction(s), s).toBe(true);
    for (const s of [
      'Received',
      'Scheduled',
      'In Production',
      'Dispatched',
      'Closed',
      'Cancelled',
      'Returned',
      'Holdings',
    ])
      expect(needsAction(s), s).toBe(false);
    expect(statusClass('On Hold')).toBe('st st-on-hold tone-action');
    expect(statusClass('Dispatched')).toBe('st st-dispatched tone-other');
  });

  it('styles every job status of the reports by its own name and a tone from the one table', () => {
    for (const s of JOB_STATUSES) expect(statusClass(s)).toBe(`st st-${s} tone-${JOB_STATUS_LOOK[s].tone}`);
    expect(statusClass('planned')).toContain('tone-planned');
    expect(statusClass('done')).toContain('tone-good');
  });
});
