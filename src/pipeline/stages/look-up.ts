import type { ManifestJob } from '../../manifest/model.js';
import { patchableOf } from '../apply-changes.js';
import type { JobState } from '../job-state.js';
import { alreadySubmitted, settleInDoubt, verifyUnseen } from '../submit-job.js';
import type { StageContext } from './context.js';
import { withLedgerOutcome } from './ledger-outcome.js';

/**
 * Orders the ledger already knows are reported as such and cost no further calls. `plan`
 * only reads the ledger; `run` also settles, by search, orders an earlier run left in doubt,
 * and — when the ledger cannot vouch for the account — searches the account for orders the
 * ledger has never seen, before a dry run is spent on a job that already exists.
 */
export async function lookUp(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'checked') return job;
  // Read once for the three checks below (a hint; sending is decided under the lock), or the
  // same hint read as the input began: nothing is decided on either alone but `submitted`,
  // which an entry never stops being.
  const peeked = ctx.absentAtStart?.delete(job.orderNumber)
    ? undefined
    : await ctx.ledger.read({ account: ctx.account, orderNumber: job.orderNumber });
  const known =
    alreadySubmitted(peeked, job.hash) ??
    (ctx.mode === 'run' ? await settleInDoubt(ctx.submit, job.orderNumber, job.hash, peeked) : undefined);
  if (known) {
    // An order whose earlier outcome still cannot be searched is reported in doubt: the API is
    // unavailable (run: exit 3), except where that fails the input (watch, inDoubtFailsInput).
    // One whose search met only a look-alike is in doubt too, but not unavailable: it waits for a person.
    return withLedgerOutcome(job, ctx.inDoubtFailsInput ? { ...known, unavailable: false } : known, ctx);
  }
  const unseen =
    ctx.mode === 'run'
      ? await verifyUnseen(ctx.submit, job.orderNumber, job.hash, peeked, () =>
          patchableOf(ctx.manifest.jobs.at(job.index) as ManifestJob),
        )
      : undefined;
  // A search that could not be made leaves the job undecided: the API is unavailable (exit 3).
  return unseen ? withLedgerOutcome(job, unseen, ctx) : job;
}
