import type { JobStatus } from '../report/model.js';

/**
 * How the dashboard shows a status: one table per vocabulary, each row naming the status as the
 * CLI and the reports name it (JOB_STATUSES in report/model.ts) and how it looks. The tables
 * are `Record`s over the status types, so a status added there does not compile until it has
 * its row here — and that one row is all it takes: badges, columns, chart series and styles
 * are made from these tables.
 */

/** What a status means to the person looking; each tone has one style (static-assets.ts). */
export type Tone = 'good' | 'planned' | 'bad' | 'doubt' | 'busy' | 'quiet' | 'action' | 'other';

export interface StatusLook {
  tone: Tone;
  /** Its colour in the charts. */
  colour: string;
}

/** The reports' job statuses, in the order of JOB_STATUSES. */
export const JOB_STATUS_LOOK: Readonly<Record<JobStatus, StatusLook>> = {
  valid: { tone: 'planned', colour: '#1565c0' },
  invalid: { tone: 'bad', colour: '#ad1457' },
  submitted: { tone: 'good', colour: '#2e7d32' },
  'already-submitted': { tone: 'good', colour: '#81c784' },
  failed: { tone: 'bad', colour: '#c62828' },
  'not-submitted': { tone: 'quiet', colour: '#8d6e63' },
  'in-doubt': { tone: 'doubt', colour: '#ef6c00' },
  skipped: { tone: 'quiet', colour: '#b0bec5' },
  'awaiting-approval': { tone: 'action', colour: '#f9a825' },
};

/**
 * An input's status on the dashboard: where the file is and what its report says. `planned`:
 * checked or planned only (`check`, `plan`, a dry run), nothing ordered. `held`: nothing
 * failed, but jobs wait for approval (in a drop folder's held/, or a `run` that exited 4).
 */
export type InputStatus = 'waiting' | 'processing' | 'planned' | 'done' | 'failed' | 'in doubt' | 'held';

export const INPUT_STATUS_LOOK: Readonly<Record<InputStatus, StatusLook>> = {
  done: { tone: 'good', colour: '#2e7d32' },
  failed: { tone: 'bad', colour: '#c62828' },
  'in doubt': { tone: 'doubt', colour: '#ef6c00' },
  held: { tone: 'action', colour: '#f9a825' },
  planned: { tone: 'planned', colour: '#1565c0' },
  processing: { tone: 'busy', colour: '#64b5f6' },
  waiting: { tone: 'quiet', colour: '#b0bec5' },
};

export const INPUT_STATUSES = Object.keys(INPUT_STATUS_LOOK) as InputStatus[];

/**
 * The provider's job statuses are its own words, read at run time and never a fixed list (the
 * API's spec: clients must not hard-code them). Those that wait on the customer — a job on
 * hold, artwork pending or awaited, a proof or an approval to give, a query to answer — are
 * recognised by these words, in any spelling of case and spacing.
 */
const ACTION_WORDS = [/\bhold\b/, /\bpending\b/, /\bawait/, /\bartwork\b/, /\bproof/, /\bapprov/, /\bquer(y|ied)\b/];

/** Whether a provider status asks something of the customer (ACTION_WORDS). */
export function needsAction(providerStatus: string | null | undefined): boolean {
  if (!providerStatus) return false;
  const words = providerStatus.toLowerCase().replace(/[_-]+/g, ' ');
  return ACTION_WORDS.some((w) => w.test(words));
}

/** The tone of any status word the pages show: an input's, a job's, or the provider's. */
export function toneOf(status: string): Tone {
  if (Object.hasOwn(INPUT_STATUS_LOOK, status)) return INPUT_STATUS_LOOK[status as InputStatus].tone;
  if (Object.hasOwn(JOB_STATUS_LOOK, status)) return JOB_STATUS_LOOK[status as JobStatus].tone;
  return needsAction(status) ? 'action' : 'other';
}
