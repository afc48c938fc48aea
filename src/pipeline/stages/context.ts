import type { LinkChecks } from '../../api/artwork-checks.js';
import type { Clock } from '../../core/clock.js';
import type { ApiClient } from '../../api/client.js';
import type { ArtworkStore } from '../../storage/artwork-store.js';
import type { LedgerStore } from '../../storage/ledger/model.js';
import type { Logger } from '../../core/log/logger.js';
import type { JobList, Manifest } from '../../manifest/model.js';
import type { AccountCatalogue } from '../../resolve/catalogue.js';
import type { JobState } from '../job-state.js';
import type { InputArtworkFiles } from './artwork-files.js';
import type { SubmitContext } from '../submit-job.js';
import type { GuardLimits } from './guard.js';

/** What every stage of one input may use. plan and run differ only in `mode`. */
export interface StageContext {
  mode: 'plan' | 'run';
  manifest: Manifest<JobList>;
  /** The input as log lines name it (PipelineContext.displayName). */
  displayName: string;
  client: ApiClient;
  /** One per account per run: lookups are shared by every input of the run, never across accounts. */
  catalogue: AccountCatalogue;
  ledger: LedgerStore;
  /** This input's artwork link checks (each distinct link probed once per run); absent when artworkCheck is off. */
  artwork?: LinkChecks;
  /** Where `artwork:` files are uploaded; absent when artworkStore is not set. */
  artworkStore?: ArtworkStore;
  /** This input's `artwork:` files: their folder, its cap on their bytes, its uploads; with artworkStore. */
  artworkFiles?: InputArtworkFiles;
  /** A presigned artwork link lives until the due date plus this many days. */
  artworkMarginDays: number;
  /** Ledger account key (region base URL + account id). */
  account: string;
  /**
   * Orders the ledger had no entry for when this input began (read without their locks, as the
   * look-up reads): the look-up takes that read for its own, once.
   */
  absentAtStart?: Set<string>;
  /** The account's currency (PipelineContext.currency): a job the ledger vouches for is reported in it. */
  currency?: string;
  logger: Logger;
  /** run: asked before a change of a submitted job is sent; a reason not to send it (PipelineHooks.beforeSend). */
  beforeSend?: () => Promise<string | undefined>;
  /** The guardrails' limits (stages/guard.ts). */
  guard: GuardLimits;
  /**
   * An order an earlier attempt left in doubt that still cannot be searched fails its input
   * (watch: a dropped file retried once ends in failed/, docs/notifications.md) instead of
   * marking it unavailable (run: exit 3, docs/commands.md#exit-codes).
   */
  inDoubtFailsInput: boolean;
  /** The calendar clock of every rule that reads the date (core/clock.ts); never used to measure waiting. */
  clock: Clock;
  /** The exactly-once protocol's own context (submit-job.ts). */
  submit: SubmitContext;
}

/** One step of a job's way: the job as it stands → the job after the stage. */
export type Stage = (job: JobState, ctx: StageContext) => Promise<JobState>;
