import { addAmount, type Amounts } from './amounts.js';
import type { InputRecord } from './drop-inputs.js';
import type { JobView, TrackingView } from './report-view.js';

/**
 * Each job the API made, counted once. An input dropped again whose jobs were already submitted
 * gets a report of its own saying `already-submitted`, with the same job numbers and costs: the
 * same orders, not new spending. A job is known by what the API gave it, its job number, with
 * its order number (the ledger's identity), and belongs to one input: the one whose report says
 * it `submitted` it, else the earliest that lists it. Spend, the jobs of a day and the orders in
 * flight are counted from the jobs each input owns; an input's other copies are left out.
 */

export interface Submission {
  input: InputRecord;
  job: JobView & { jobNumber: number };
}

export interface Submissions {
  /** Every job the API made, once, with the input it belongs to. */
  owned: Submission[];
  /** Per input id: what its own submissions cost (per currency). */
  spend: Map<string, Amounts>;
  /** Per input id: its jobs by status that another input owns (copies, not counted again). */
  copies: Map<string, Map<string, number>>;
}

const first = (a: Submission, b: Submission): boolean => {
  const rank = (s: Submission): number => (s.job.status === 'submitted' ? 0 : 1);
  return (rank(a) - rank(b) || a.input.at - b.input.at || a.input.id.localeCompare(b.input.id)) < 0;
};

const newer = (a: TrackingView | null, b: TrackingView | null): boolean =>
  a !== null && (b === null || (a.checkedAt ?? '') > (b.checkedAt ?? ''));

export function submissions(inputs: readonly InputRecord[]): Submissions {
  const byJob = new Map<string, Submission>();
  const every: Submission[] = [];
  for (const input of inputs) {
    for (const job of input.digest) {
      if (job.jobNumber === null) continue;
      const s: Submission = { input, job: { ...job, jobNumber: job.jobNumber } };
      every.push(s);
      const key = `${job.jobNumber}\u0000${job.orderNumber ?? ''}`;
      const had = byJob.get(key);
      // What `htorder track` last saw of the job, whichever copy of the report it was written into.
      const tracking = newer(had?.job.tracking ?? null, s.job.tracking) ? (had?.job.tracking ?? null) : s.job.tracking;
      // The currency any copy recorded: an older htorder wrote none for a job the ledger vouched for.
      const currency = had?.job.currency ?? s.job.currency;
      const owner = had === undefined || first(s, had) ? s : had;
      byJob.set(key, { input: owner.input, job: { ...owner.job, tracking, currency: owner.job.currency ?? currency } });
    }
  }
  const owned = [...byJob.values()];
  const owners = new Set(owned.map((s) => `${s.input.id}\u0000${s.job.index}`));
  const spend = new Map<string, Amounts>();
  for (const s of owned) {
    const a = spend.get(s.input.id) ?? new Map();
    addAmount(a, s.job.currency, s.job.totalJobCost);
    spend.set(s.input.id, a);
  }
  const copies = new Map<string, Map<string, number>>();
  for (const s of every) {
    if (owners.has(`${s.input.id}\u0000${s.job.index}`)) continue;
    const c = copies.get(s.input.id) ?? new Map<string, number>();
    c.set(s.job.status, (c.get(s.job.status) ?? 0) + 1);
    copies.set(s.input.id, c);
  }
  return { owned, spend, copies };
}
