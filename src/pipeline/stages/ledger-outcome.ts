import type { ActiveJobDto } from '../../api/types.js';
import type { Diagnostic } from '../../manifest/model.js';
import { extend } from '../../core/extend.js';
import type { LedgerEntry, LedgerEntryUnreadableError } from '../../storage/ledger/model.js';
import { apiDiagnostics } from '../api-diagnostics.js';
import { withFindings, type JobState, type StageOutcome } from '../job-state.js';
import { ENTRY_UNREADABLE } from '../job-status.js';
import type { SubmitOutcome, SubmitStatus } from '../submit-job.js';
import type { StageContext } from './context.js';

const OUTCOMES: Readonly<Record<SubmitStatus, Exclude<StageOutcome, 'ready'>>> = {
  submitted: 'created',
  'already-submitted': 'found',
  failed: 'not-created',
  'in-doubt': 'unknown',
};

/**
 * What the exactly-once protocol learnt about an order (from the ledger look-up or the
 * submit) does to the job: its new outcome, the ledger entry the report takes the job
 * number, due date, cost and lines from, and the findings worth telling the user.
 */
export function withLedgerOutcome(job: JobState, o: SubmitOutcome, ctx: StageContext): JobState {
  const outcome = OUTCOMES[o.status];
  const where = `jobs[${job.index}]`;
  const at = () => ({ field: where, source: ctx.manifest.sources.locate(where) });
  const diagnostics: Diagnostic[] = [];
  if (o.changedAfterSubmit) {
    const e = o.entry;
    diagnostics.push({
      severity: 'error',
      code: 'ledger.changed-after-submit',
      message:
        `order ${JSON.stringify(job.orderNumber)} was already submitted as job ${e?.jobNumber ?? '?'} ` +
        `(${e?.outcomeAt ?? e?.intentAt}); this entry has changed since, and the change was NOT sent`,
      ...at(),
    });
  }
  if (o.status === 'in-doubt' && o.lookalikes) {
    diagnostics.push({
      severity: 'error',
      code: 'run.lookalike-order',
      message: lookalikeMessage(job, o.lookalikes),
      ...at(),
    });
  } else if (o.status === 'in-doubt') {
    diagnostics.push({
      severity: 'error',
      code: 'run.in-doubt',
      message:
        'the job may or may not have been created and the API could not be searched to find out; ' +
        'run again later: it is settled by search before anything is sent',
      ...at(),
    });
  }
  if ((o.status === 'failed' || o.status === 'in-doubt') && o.error) {
    diagnostics.push(...apiDiagnostics(o.error, ctx.manifest, job.index));
  }
  const ledger: { outcome: StageOutcome; entry?: LedgerEntry; currency?: string } = { outcome };
  if (o.entry) ledger.entry = o.entry;
  if (ctx.currency) ledger.currency = ctx.currency;
  return extend(withFindings(job, diagnostics), {
    outcome,
    ledger,
    unavailable: job.unavailable || o.unavailable === true,
  });
}

/** What a user reads of an order held for jobs on the account spelt like it (submit-job.ts, heldForLookalikes). */
function lookalikeMessage(job: JobState, lookalikes: readonly ActiveJobDto[]): string {
  const jobs = lookalikes.map((j) => `job ${j.jobNumber} (order number ${JSON.stringify(j.orderNumber)})`).join(', ');
  return (
    `order ${JSON.stringify(job.orderNumber)} was not sent: the account has no job with this order number, but ${jobs} ` +
    'differs from it only in letter case, blanks or Unicode form, and may be this order as the API stored it. ' +
    "Look at the job (htorder api GET /Jobs/<job number>, or the printer's portal): if it is this order, take the " +
    'order out of the input, it is on the account; if it is another order, give this one an order number that ' +
    'differs from it by more than case and blanks, and run again. Until then every run holds it, nothing sent'
  );
}

/**
 * An order whose ledger entry exists but cannot be read (LedgerEntryUnreadableError): never
 * taken for an order the ledger has not seen, which could send it twice. The job fails and
 * nothing of it is sent; it needs someone to look, so it is not the API unavailable (exit 3,
 * retried) but a failed job (exit 1), and it holds only itself (holdsInput).
 */
export function withUnreadableEntry(job: JobState, err: LedgerEntryUnreadableError, ctx: StageContext): JobState {
  const where = `jobs[${job.index}]`;
  const order = JSON.stringify(job.orderNumber);
  const search = `htorder api GET '/Jobs/active?searchText=${encodeURIComponent(job.orderNumber)}&includeClosedJobs=true'`;
  ctx.logger.error({ file: ctx.displayName, orderNumber: job.orderNumber, entry: err.path, err: err.why }, err.message);
  const unreadable: Diagnostic = {
    severity: 'error',
    code: ENTRY_UNREADABLE,
    message:
      `the ledger entry of order ${order}, ${err.path}, cannot be read (${err.why}): the order was not sent. ` +
      `Look it up on the account (${search}, or the printer's portal), then repair the file, or remove it and ` +
      'run again once with HTORDER_VERIFY_NEW_ORDERS=always, which searches the account for it before sending it; ' +
      'without that, a ledger that vouches for the account takes an order with no entry for a new one and sends it',
    field: where,
    source: ctx.manifest.sources.locate(where),
  };
  return { ...withFindings(job, [unreadable]), outcome: 'not-processed', unavailable: false };
}
