import { type Clock, nowDate, nowIso } from '../core/clock.js';
import type { ArtworkChecks } from '../api/artwork-checks.js';
import type { ApiClient } from '../api/client.js';
import { storeUnavailable } from '../api/errors.js';
import type { ArtworkStore } from '../storage/artwork-store.js';
import type { FolderPin } from '../storage/folder-file.js';
import { type LedgerStore, lookAtEntry } from '../storage/ledger/model.js';
import type { Logger } from '../core/log/logger.js';
import { loadManifest, type LoadResult, windowedRead } from '../manifest/load-manifest.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { JobList, Manifest } from '../manifest/model.js';
import {
  type CsvLimits,
  INPUT_MAPPING_CHOICE,
  INPUT_NOT_FOUND,
  INPUT_UNREADABLE,
  INPUT_UNSUPPORTED,
} from '../manifest/read-input.js';
import { checkedReport } from '../report/build-report.js';
import type { ResultReport } from '../report/model.js';
import { reportPaths } from '../report/report-paths.js';
import { ReportWriter } from '../report/report-writer.js';
import { SpooledReport } from '../report/spooled-report.js';
import type { ReportQuotes } from '../report/write-errors-txt.js';
import {
  type ReportTarget,
  reportsBlocked,
  reportsNotWritten,
  reportsUnwritable,
  type WrittenReports,
} from '../report/write-reports.js';
import type { AccountCatalogue } from '../resolve/catalogue.js';
import { resolveJob } from '../resolve/resolve-job.js';
import { errorText } from './api-diagnostics.js';
import { type AccountListing, listAccount } from './find-submitted.js';
import { eachJob, flow, forEachJob, notProcessed } from './flow.js';
import { type JobEndList, JobEnds } from './job-end.js';
import { JobReporter } from './job-report.js';
import { checkPlanned, type PlanCheck, type PlannedJob } from './saved-plan.js';
import { checkedJobs, type JobState, orderNumbersOf, type StageOutcome } from './job-state.js';
import { blocksSubmission } from './job-status.js';
import { checkArtwork } from './stages/artwork.js';
import { InputArtworkFiles } from './stages/artwork-files.js';
import { provideArtwork } from './stages/provide-artwork.js';
import { applyChanges } from './stages/changes.js';
import type { StageContext } from './stages/context.js';
import { dryRun } from './stages/dry-run.js';
import { lookUp } from './stages/look-up.js';
import { keepResolution, resolve, resolveAgain } from './stages/resolve.js';
import { guard, type GuardLimits, NO_LIMITS } from './stages/guard.js';
import {
  capHeld,
  forgetApproved,
  overDailyCost,
  overInputCost,
  recordHeld,
  releaseUnspent,
  forgetRefusedContent,
  rememberContent,
} from './stages/input-guard.js';
import { holdBack, mustHoldBack, submit, withdraw } from './stages/submit.js';

/**
 * One input through the pipeline (docs/architecture.md#the-pipeline):
 *   load + check → [run: ledger look-up] → resolve + preflight + estimate → dry run
 *   → [run: submit exactly once, all or nothing unless --partial] → reports.
 * Each stage is a function from a job's state to its next state (stages/*.ts); job-status.ts
 * alone decides the status a state is reported with, and the report is written from the
 * states (job-report.ts). plan and run go through the same stages; only run submits.
 */

/**
 * `watch` runs as `run`, and its reports are written by the caller, once, where the input ends
 * up (InputOutcome.writeReports) instead of next to the file as jobs finish.
 */
export type PipelineCommand = 'plan' | 'run' | 'watch';

export interface PipelineContext {
  command: PipelineCommand;
  /** Submit the valid jobs even when others of the manifest failed (default: all or nothing). */
  partial: boolean;
  concurrency: number;
  mapping?: Mapping;
  /** Setting defaultDeliveryMethod: a mapped export's orders without a method get it (LoadOptions). */
  defaultDeliveryMethod?: string;
  /** CSV reader limits (settings csvMax*); the defaults of read-input.ts when absent. */
  csvLimits?: Partial<CsvLimits>;
  /** Largest YAML or JSON manifest (setting manifestMaxBytes); read-input.ts's default when absent. */
  manifestMaxBytes?: number;
  client: ApiClient;
  /** One per account per run: lookups are shared by every input of the run, never across accounts. */
  catalogue: AccountCatalogue;
  /** One per run, like the catalogue: each distinct artwork link probed once; absent when artworkCheck is off. */
  artwork?: ArtworkChecks;
  /**
   * Where `artwork:` files are uploaded (artworkStore), how long past the due date their links
   * live, and how many bytes of them one input may name (artworkMaxInputBytes).
   */
  artworkStore?: { store: ArtworkStore; marginDays: number; maxInputBytes: number };
  /** `watch`: the folder the input was dropped in, where its `artwork:` files are (default: the manifest's own). */
  artworkFolder?: FolderPin;
  ledger: LedgerStore;
  /** Ledger account key: region + account id (ledger/account-key.ts). */
  account: string;
  /** The account's currency (its profile), learnt with the account: what the jobs the ledger vouches for cost in. */
  currency?: string;
  /**
   * Set when the ledger cannot vouch for the account (a new or moved state dir, another
   * machine) or HTORDER_VERIFY_NEW_ORDERS=always: `run` searches the account for every order
   * the ledger has never seen before anything is spent on it. `vouch` (new ledgers only) is
   * called once a run has searched or recorded every order of an input: from then on the
   * ledger vouches for the account.
   */
  unseen?: { vouch?: () => Promise<void> };
  /**
   * Set while the ledger vouches for the account: asked by `run` before anything is spent on
   * an input's orders the ledger has never seen, whether it is still the account's only writer
   * (app/vouching.ts). When not, those orders are checked on the account as `unseen` says.
   */
  soleWriter?: () => Promise<boolean>;
  logger: Logger;
  /** The guardrails (docs/guardrails.md); none when absent. */
  guard?: GuardLimits;
  /** apply: the saved plan's jobs of this input; only they may be sent, and only unchanged (saved-plan.ts). */
  planned?: PlanCheck;
  /** How log lines name the input: `watch` gives where it was dropped, not its private copy; the file by default. */
  displayName?: string;
  /** How the caller takes part in one input's way. */
  hooks?: PipelineHooks;
  /**
   * Whether the outcome's report keeps every job's result once the input is done (default
   * true); without, the report holds its summary and what an alert quotes
   * (InputOutcome.quotes), and its jobs are let go: a caller that lists them reads them in
   * hooks.onOutcome.
   */
  keepJobs?: boolean;
  /**
   * `plan --out`: each valid job's request is kept until the input is done
   * (InputOutcome.planned); a plan that saves nothing keeps none.
   */
  savesPlan?: boolean;
  /** The calendar clock of every time-based rule (core/clock.ts). */
  clock: Clock;
}

export interface PipelineHooks {
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Told of each input's outcome as it is done, while its report's jobs can still be read
   * (plan and run: afterwards only what `keepJobs` keeps is left).
   */
  onOutcome?: (outcome: InputOutcome) => void | Promise<void>;
  /**
   * Asked right before the first job is submitted, and before each change (PATCH, cancel) of a
   * submitted job is sent; a reason not to send anything from this input (`watch`: it changed
   * since it was read), or undefined to go on.
   */
  beforeSend?: () => Promise<string | undefined>;
}

export interface ProgressEvent {
  file: string;
  /** `plan`: ledger look-up, changes, resolve, preflight and dry run, job by job. */
  stage: 'plan' | 'submit' | 'done';
  done: number;
  total: number;
}

/** `held`: nothing failed, but jobs wait for approval (exit 4; watch: held/). */
export type InputStatus = 'ok' | 'invalid' | 'unreadable' | 'unavailable' | 'held';

export interface InputOutcome {
  file: string;
  status: InputStatus;
  report?: ResultReport;
  /** What an alert quotes of the report: its first errors, its held jobs' reasons. */
  quotes?: ReportQuotes;
  reports?: WrittenReports;
  /** `watch`: writes the reports (once) to `target`. */
  writeReports?: (target: ReportTarget) => Promise<WrittenReports>;
  /**
   * `watch`: lets go of the report's temporary files once its reports are written or given up
   * (after writeReports, or instead of it); called once the outcome has been read.
   */
  close?: () => Promise<void>;
  /** `plan --out`: each valid job's request by index, as a saved plan holds it (empty otherwise). */
  planned: ReadonlyMap<number, PlannedJob>;
  /** The account's currency as the jobs' estimates give it (none when nothing was resolved). */
  currency?: string;
  /**
   * Why an unreadable input could not be processed, or why an `unavailable` one was left
   * undecided where no job's own report says it (the ledger's store unreachable between jobs).
   */
  problem?: string;
}

const USAGE_CODES = new Set([INPUT_NOT_FOUND, INPUT_UNREADABLE, INPUT_UNSUPPORTED, INPUT_MAPPING_CHOICE]);

/** The stages every job goes through, in plan and in run alike, each job on its own. */
const PLAN = flow(lookUp, applyChanges, resolve, provideArtwork, checkArtwork, dryRun, guard);
/** run only, once every job is through PLAN. */
const SUBMIT = flow(resolveAgain, rememberContent, submit, forgetRefusedContent);

/**
 * Jobs worked on at once per API call in flight (`concurrency`: the client caps the calls, and
 * that is what the API sees), so that while some jobs wait on the API others do their local
 * work. A dry run is nearly all API call; a submit also takes the order's lock, writes its
 * content note and its intent (fsynced) before the POST and its outcome after, which at a fast
 * API takes about as long as its call: with twice as many jobs as calls the calls in flight fell
 * to about half (`npm run bench -- --jobs 10000 --latency 5`).
 */
const PLAN_JOBS_PER_CALL = 2;
const SUBMIT_JOBS_PER_CALL = 4;

/**
 * An input read and checked and its jobs' first states made: the work of an input that needs
 * no answer from the API (`run` does it for its first input while the token and account
 * requests are in flight), or the outcome of an input that could not be read.
 */
export type PreparedInput =
  | {
      file: string;
      read: LoadResult<JobList>;
      /** Check's verdict on every job (checkedJobs); processPrepared takes them from this array as it runs them. */
      jobs: JobState[];
      /**
       * The report (check's, to be written over from the job states, JobReporter), its spool
       * and its writer, made on first use: not in the way of the first lookups and dry runs,
       * which need none of it.
       */
      begin(): Promise<Begun>;
    }
  | { file: string; unreadable: InputOutcome };

/** An input's report under way: the report, the reporter that renders its jobs, and its writer. */
export interface Begun {
  spooled: SpooledReport;
  reporter: JobReporter;
  writer: ReportWriter;
}

/** Reads and checks an input (stage 1); sends nothing, and needs nothing the API answers. */
export async function prepareInput(
  file: string,
  plan: Pick<
    PipelineContext,
    'command' | 'mapping' | 'csvLimits' | 'manifestMaxBytes' | 'defaultDeliveryMethod' | 'clock'
  > &
    Partial<Pick<PipelineContext, 'logger'>>,
): Promise<PreparedInput> {
  const startedAt = nowDate(plan.clock);
  const readFrom = performance.now();
  const read = await loadManifest(file, {
    ...(plan.mapping ? { mapping: plan.mapping } : {}),
    csv: plan.csvLimits,
    ...(plan.manifestMaxBytes === undefined ? {} : { maxBytes: plan.manifestMaxBytes }),
    defaultDeliveryMethod: plan.defaultDeliveryMethod,
    windowedFrom: windowedRead.fromBytes,
    ...(windowedRead.windowJobs === undefined ? {} : { windowJobs: windowedRead.windowJobs }),
    findingsBeside: reportPaths(file).json,
  });
  const usage = read.diagnostics.find((d) => USAGE_CODES.has(d.code));
  if (usage) return { file, unreadable: { file, status: 'unreadable', problem: usage.message, planned: new Map() } };
  const { manifest } = read;
  let begun: Promise<Begun> | undefined;
  const begin = (): Promise<Begun> => {
    begun ??= (async () => {
      const { input, recognised, diagnostics, jobFindings } = read;
      // Check's findings are the report's from now on, each job's held until the job ends
      // (JobReporter.endChecked): the read lets go of them.
      read.diagnostics = [];
      const checked = checkedReport({
        command: plan.command,
        input,
        recognised,
        manifest,
        diagnostics,
        ...(jobFindings === undefined ? {} : { jobFindings }),
        startedAt,
      });
      // Without a manifest there are no jobs, and nothing renders one.
      const reporter = new JobReporter(checked, manifest as Manifest<JobList>);
      // Beside the file read: watch's private copy, not the drop folder.
      const paths = reportPaths(input.file);
      const spooled = await SpooledReport.create(checked.head, checked.jobCount, reporter.pending, paths);
      reporter.spoolTo(spooled.spool);
      const writer = new ReportWriter(spooled.report, {
        manifest,
        mapping: recognised?.mapping ?? plan.mapping,
        csvLimits: plan.csvLimits,
        progress: plan.command !== 'watch',
        readTook,
        spooled,
        ...(plan.logger ? { logger: plan.logger } : {}),
      });
      return { spooled, reporter, writer };
    })();
    return begun;
  };
  const jobs = manifest && manifest.jobs.length > 0 ? checkedJobs(manifest, read.diagnostics, read.jobFindings) : [];
  const readTook = performance.now() - readFrom;
  return { file, read, jobs, begin };
}

export async function processInput(file: string, ctx: PipelineContext): Promise<InputOutcome> {
  return processPrepared(await prepareInput(file, ctx), ctx);
}

/** The rest of processInput, for an input prepareInput has read (with the plan `ctx` agrees with). */
export async function processPrepared(prepared: PreparedInput, given: PipelineContext): Promise<InputOutcome> {
  if ('unreadable' in prepared) {
    await given.hooks?.onOutcome?.(prepared.unreadable);
    return prepared.unreadable;
  }
  try {
    const begun = await beginReport(prepared, given.command);
    if (typeof begun === 'string') {
      const unwritable: InputOutcome = {
        file: prepared.file,
        status: 'unreadable',
        problem: begun,
        planned: new Map(),
      };
      await given.hooks?.onOutcome?.(unwritable);
      return unwritable;
    }
    try {
      const outcome = await processBegun(prepared, begun, given);
      await given.hooks?.onOutcome?.(outcome);
      // watch closes it once its reports are written where the input ends up (InputOutcome.close).
      if (given.command !== 'watch') await begun.spooled.close(given.keepJobs !== false);
      return outcome;
    } catch (err) {
      await begun.spooled.close();
      throw err;
    }
  } finally {
    // A windowed read's file is let go however the input ends; a job read after this (watch's
    // reports, written by the caller) opens it for that read alone (csv/job-view.ts).
    releasePrepared(prepared);
  }
}

/**
 * The input's report begun, or why its reports cannot be written beside it: nothing is sent for
 * such an input (a read-only folder of a nightly export, a folder at a report's name), and the
 * user learns why from a line, not a stack trace. watch begins in its own work folder, whose
 * failures its retries handle, and writes its reports under new names.
 */
async function beginReport(
  prepared: Exclude<PreparedInput, { unreadable: InputOutcome }>,
  command: PipelineCommand,
): Promise<Begun | string> {
  const beside = command !== 'watch';
  const blocked = beside ? await reportsBlocked(reportPaths(prepared.file)) : undefined;
  if (blocked !== undefined) return blocked;
  try {
    return await prepared.begin();
  } catch (err) {
    const problem = beside ? reportsUnwritable(err) : undefined;
    if (problem === undefined) throw err;
    return problem;
  }
}

/**
 * Lets go of what a prepared input holds open (a windowed read's descriptor): processPrepared
 * does once the input is done; a caller that does not process it after all (`run` whose API
 * cannot be reached) does instead.
 */
export function releasePrepared(prepared: PreparedInput | undefined): void {
  if (prepared !== undefined && !('unreadable' in prepared)) prepared.read.release?.();
}

async function processBegun(
  prepared: Exclude<PreparedInput, { unreadable: InputOutcome }>,
  begun: Begun,
  given: PipelineContext,
): Promise<InputOutcome> {
  const { file, read } = prepared;
  const { manifest, recognised } = read;
  const outage = new Outage(given.logger, given.displayName ?? file);
  // The orders the ledger had no entry for as this input began: its look-ups take that read for theirs.
  const absentAtStart = new Set<string>();
  let warmed = false;
  const warm = () => {
    if (warmed || !manifest) return;
    warmed = true;
    warmCatalogue(manifest, prepared.jobs, absentAtStart, given.catalogue);
  };
  // Asked before anything is spent: a store away here stops the input before any job starts.
  const ctx =
    (await outage.unlessDown('no order of this input was looked up or sent', () =>
      unlessOtherWriter(prepared.jobs, given, absentAtStart, warm),
    )) ?? given;
  if (recognised) {
    const { preset, matchedColumns } = recognised;
    ctx.logger.info(
      { file, mapping: { preset, matchedColumns } },
      `read as a shop export through the ${preset} preset`,
    );
  }
  const verifiedAbsent = new Set<string>();
  const listing = outage.error === undefined ? await listUnseen(prepared.jobs, ctx, absentAtStart, warm) : undefined;
  const jobs =
    manifest && prepared.jobs.length > 0
      ? await runJobs(manifest, prepared.jobs, begun, { ...ctx, verifiedAbsent, listing, absentAtStart, outage })
      : [];
  const { spooled, writer } = begun;
  const report = spooled.report;
  const vouch = ctx.command === 'plan' || outage.error !== undefined ? undefined : ctx.unseen?.vouch;
  if (vouch && jobs.every((job) => job.recorded || verifiedAbsent.has(job.orderNumber)))
    await outage.unlessDown(
      'not recorded that the ledger vouches for the account: the next run looks for the orders it has never seen on the account again',
      vouch,
    );
  report.finishedAt = nowIso(ctx.clock);
  const total = spooled.spool.jobCount;
  // Read once every job has ended: the spool's counts decide the status.
  const ended = () => {
    spooled.refreshSummary();
    return {
      file,
      status: outage.why === undefined ? inputStatus(jobs, spooled) : 'unavailable',
      report,
      quotes: spooled.quotes(),
      ...(outage.why === undefined ? {} : { problem: outage.why }),
      ...plannedOf(jobs),
    };
  };
  if (ctx.command === 'watch') {
    const outcome = ended();
    ctx.hooks?.onProgress?.({ file, stage: 'done', done: total, total });
    const writeReports = (target: ReportTarget) => writer.flush(target);
    return { ...outcome, writeReports, close: () => spooled.close() };
  }
  const reports = await finalReports(writer, ctx.command);
  ctx.hooks?.onProgress?.({ file, stage: 'done', done: total, total });
  if (typeof reports !== 'string') return { ...ended(), reports };
  // Nothing is lost, the reports are only not there yet: undecided, as an outage leaves it.
  return { ...ended(), status: 'unavailable', problem: reports };
}

/** The input's reports written beside it, or why the file system refused them (reportsNotWritten). */
async function finalReports(writer: Begun['writer'], command: PipelineCommand): Promise<WrittenReports | string> {
  try {
    return await writer.flush();
  } catch (err) {
    const problem = reportsNotWritten(err, command === 'run');
    if (problem === undefined) throw err;
    return problem;
  }
}

/**
 * The ledger's store found unreachable outside the jobs' own stages (a stage's failure is its
 * job's, flow.ts): between jobs, nothing can be decided either. The first reason makes the
 * input `unavailable` (exit 3; watch retries it); each step it stopped is said in the log.
 */
class Outage {
  /** The first store failure met, if any. */
  error: unknown;

  /** Why the input is undecided: the first failure's reason. */
  get why(): string | undefined {
    return this.error === undefined ? undefined : storeUnavailable(this.error);
  }

  constructor(
    private readonly logger: Logger,
    private readonly file: string,
  ) {}

  /** Runs `step`; the store unreachable is noted, and `notDone` logged, instead of thrown. */
  async unlessDown<T>(notDone: string, step: () => Promise<T>): Promise<T | undefined> {
    try {
      return await step();
    } catch (err) {
      const why = storeUnavailable(err);
      if (why === undefined) throw err;
      this.error ??= err;
      this.logger.warn({ file: this.file, err: why }, `${notDone} (the ledger's store cannot be reached)`);
      return undefined;
    }
  }
}

/** What one input's run adds to its context: what it learnt of orders the ledger has never seen. */
type RunContext = PipelineContext & {
  verifiedAbsent: Set<string>;
  listing: AccountListing | undefined;
  absentAtStart: Set<string>;
  outage: Outage;
};

/**
 * When the ledger cannot vouch for the account, this input's orders it has never seen are
 * checked on the account before anything is spent on them: by one listing of the account's
 * jobs when that costs fewer calls than one search per order (find-submitted.ts, listAccount),
 * else by a search each. A listing that fails leaves them to their searches, as before.
 */
async function listUnseen(
  jobs: readonly JobState[],
  ctx: PipelineContext,
  absent: Set<string>,
  warm: () => void,
): Promise<AccountListing | undefined> {
  if (ctx.command === 'plan' || !ctx.unseen) return undefined;
  const checked = [...new Set(jobs.filter((job) => job.outcome === 'checked').map((job) => job.orderNumber))];
  try {
    const unseen = checked.length < 2 ? checked.length : await countUnseen(checked, ctx, absent);
    // One order: its search is one call, which no listing beats.
    if (unseen < 2) return undefined;
    warm();
    const listing = await listAccount(
      (page, pageSize) => ctx.client.jobs.active({ includeClosedJobs: true, page, pageSize }),
      unseen,
    );
    ctx.logger.debug(
      { orders: unseen, pages: listing.pages, complete: listing.complete },
      listing.complete
        ? "listed the account's jobs for the orders the ledger has never seen"
        : 'searching each order the ledger has never seen',
    );
    return listing;
  } catch (err) {
    ctx.logger.debug({ err: errorText(err) }, "could not list the account's jobs; searching each order instead");
    return undefined;
  }
}

/**
 * A vouching ledger, asked to send orders it has never seen, first asks whether it is still the
 * account's only writer; if not, this input checks them on the account like a new ledger's.
 */
async function unlessOtherWriter(
  jobs: readonly JobState[],
  ctx: PipelineContext,
  absent: Set<string>,
  warm: () => void,
): Promise<PipelineContext> {
  if (ctx.command === 'plan' || ctx.unseen || !ctx.soleWriter) return ctx;
  const orders = [...new Set(jobs.filter((job) => job.outcome === 'checked').map((job) => job.orderNumber))];
  if ((await countUnseen(orders, ctx, absent, 1)) === 0) return ctx;
  warm();
  if (await ctx.soleWriter()) return ctx;
  return { ...ctx, unseen: {} };
}

/**
 * Starts resolving the first job whose order the ledger has never seen (the first in `absent`),
 * its outcome dropped, before a round trip about the account is awaited (run's look for other
 * writers, or its listing of the account's jobs): the job's catalogue lookups (its lines'
 * assets, the countries, the delivery options…) are then under way meanwhile, and the input's
 * first dry run waits for one round trip less. They are lookups that job's own resolve makes
 * anyway, and resolving sends nothing; the catalogue keeps each answer for the run, a failure
 * too, as when the job's resolve had asked.
 */
function warmCatalogue(
  manifest: Manifest<JobList>,
  jobs: readonly JobState[],
  absent: ReadonlySet<string>,
  catalogue: AccountCatalogue,
): void {
  const first = absent.values().next();
  if (first.done) return;
  const job = jobs.find((j) => j.outcome === 'checked' && j.orderNumber === first.value);
  if (job !== undefined) resolveJob(manifest, job.index, catalogue).catch(() => undefined);
}

/**
 * How many of `orders` the ledger has no entry for (read a few at a time, without their locks),
 * counting no further than `enough`; each such order goes into `absent`.
 */
async function countUnseen(
  orders: readonly string[],
  ctx: PipelineContext,
  absent: Set<string>,
  enough = Number.POSITIVE_INFINITY,
) {
  let unseen = 0;
  for (let i = 0; i < orders.length && unseen < enough; i += 64) {
    const batch = orders.slice(i, i + 64);
    const entries = await Promise.all(
      // An entry that cannot be read is there all the same: its order fails at its look-up.
      batch.map((orderNumber) => lookAtEntry(ctx.ledger, { account: ctx.account, orderNumber })),
    );
    entries.forEach((entry, j) => {
      if (entry !== undefined) return;
      absent.add(batch[j] as string);
      unseen++;
    });
  }
  return unseen;
}

/**
 * check → PLAN, job by job → [run: hold back or SUBMIT, job by job]; the report is written from
 * the states. A job ends (JobReporter.end) at its last write: when it leaves PLAN unsent, or
 * after its submit; a job to be sent is written after PLAN and rendered from that state until.
 */
async function runJobs(
  manifest: Manifest<JobList>,
  checked: JobState[],
  begun: Begun,
  ctx: RunContext,
): Promise<JobEndList> {
  const stage = stageContext(manifest, ctx);
  const { reporter, writer, spooled } = begun;
  // The spool asks to wait while its text waits for the disk; a spool write that failed fails
  // the report's next write (and the input's final one), not the jobs.
  const wait = () => spooled.spool.flushed().catch(() => undefined);
  const endedAtCheck = await endRefused(checked, reporter, wait);
  const end = async (job: JobState): Promise<void> => {
    if (endedAtCheck[job.index] === 1) {
      // No stage changes a job check refused: it comes back as it was spooled.
      if (job.outcome !== 'refused') throw new Error(`job ${job.index} ended at check came back ${job.outcome}`);
      return;
    }
    if (!reporter.end(job)) await wait();
  };
  const progress = (name: ProgressEvent['stage']) => (done: number, total: number) =>
    ctx.hooks?.onProgress?.({ file: manifest.file, stage: name, done, total });
  // What is kept of each job once it has ended: its record, in the input's columns.
  const ends = new JobEnds(checked.length, orderNumbersOf(manifest));
  const keepRequest = ctx.command === 'plan' && ctx.savesPlan === true;
  const endAll = async (jobs: JobState[]): Promise<JobEnds> => {
    for (const job of jobs) {
      await end(job);
      ends.set(job, keepRequest);
    }
    return ends;
  };

  // The store away before the jobs started: none of them is looked up, nothing is sent.
  const decided =
    ctx.outage.error === undefined
      ? await planJobs(checked, stage, { ctx, width: ctx.concurrency * PLAN_JOBS_PER_CALL, progress: progress('plan') })
      : { unsent: stopped(checked, ['checked'], ctx.outage.error, stage) };
  if (!('send' in decided)) return endAll(decided.unsent);
  // Only the jobs ready to send have a write to come; the others end now.
  for (const job of decided.send) {
    if (job.outcome === 'ready') reporter.write(job);
    else await end(job);
  }
  // Each outcome is in the report on disk soon after (the writer coalesces rewrites); the
  // ledger, not the report, is the durable record of what was submitted. A job's state gives
  // way to its small record once its outcome is written.
  await forEachJob(decided.send, {
    select: (job) => job.outcome === 'ready',
    stage: async (job, c) => {
      const out = await SUBMIT(job, c);
      await end(out);
      writer.schedule();
      return out;
    },
    ctx: stage,
    width: ctx.concurrency * SUBMIT_JOBS_PER_CALL,
    done: (_, job) => ends.set(job, keepRequest),
    progress: progress('submit'),
  });
  await ctx.outage.unlessDown(
    "what was counted for orders not created stays counted in today's budget (maxDailyCost)",
    () => releaseUnspent(ends, stage),
  );
  await forgetApproved(ends, stage);
  return ends;
}

/**
 * Ends every job check refused, in order, before any other stage runs and before the report is
 * first written: nothing changes such a job, so its result goes to the report's spool now and
 * what the input keeps of it is its state's one field until its end record (JobEnds). Answers
 * which jobs ended so (1 each).
 */
async function endRefused(jobs: readonly JobState[], reporter: JobReporter, wait: () => Promise<unknown>) {
  const ended = new Uint8Array(jobs.length);
  for (const job of jobs) {
    if (job.outcome !== 'refused') continue;
    ended[job.index] = 1;
    if (!reporter.endChecked(job)) await wait();
  }
  return ended;
}

/** Each job still at one of `at`, not processed: `err` (the store away) stopped it there. */
function stopped(jobs: JobState[], at: readonly StageOutcome[], err: unknown, stage: StageContext): JobState[] {
  return jobs.map((job) => (at.includes(job.outcome) ? notProcessed(job, err, stage) : job));
}

/**
 * Each job flows on its own through look-up, changes, resolve and dry run: only submitting
 * waits for every job (all or nothing), so one job's lookups overlap others' dry runs. Then the
 * input's guardrails decide: the jobs to `send` (run), or every job as it ends unsent (plan, a
 * withdrawn input, or jobs held back).
 */
async function planJobs(
  checked: JobState[],
  stage: StageContext,
  opts: { ctx: RunContext; width: number; progress: (done: number, total: number) => void },
): Promise<{ send: JobState[] } | { unsent: JobState[] }> {
  const { ctx } = opts;
  const planned = await eachJob(checked, {
    select: (job) => job.outcome === 'checked',
    stage: PLAN,
    ctx: stage,
    width: opts.width,
    keep: (job) => keepResolution(job, stage.manifest),
    progress: opts.progress,
  });
  const decided = await ctx.outage.unlessDown("the input's guardrails were not applied: nothing of it was sent", () =>
    guardInput(planned, stage, ctx),
  );
  return decided ?? { unsent: stopped(planned, ['ready', 'awaiting-approval'], ctx.outage.error, stage) };
}

/** The guardrails over the whole input and the account's day: the jobs to send, or every job unsent. */
async function guardInput(
  planned: JobState[],
  stage: StageContext,
  ctx: RunContext,
): Promise<{ send: JobState[] } | { unsent: JobState[] }> {
  let jobs = await overInputCost(ctx.planned ? checkPlanned(planned, ctx.planned, stage) : planned, stage);
  if (ctx.command === 'plan')
    return { unsent: capHeld(await overDailyCost(jobs, stage, { partial: ctx.partial, count: false }), stage) };
  if (!mustHoldBack(jobs, ctx.partial)) {
    const withdrawn = await ctx.hooks?.beforeSend?.();
    if (withdrawn !== undefined) return { unsent: withdraw(jobs, stage, withdrawn) };
    jobs = await overDailyCost(jobs, stage, { partial: ctx.partial, count: true });
  }
  jobs = capHeld(jobs, stage);
  await recordHeld(jobs, stage);
  if (mustHoldBack(jobs, ctx.partial)) return { unsent: holdBack(jobs, stage) };
  return { send: jobs };
}

function stageContext(manifest: Manifest<JobList>, ctx: RunContext): StageContext {
  const { client, ledger, account, logger, verifiedAbsent, listing, clock, absentAtStart } = ctx;
  const verifyUnseen = ctx.unseen !== undefined;
  const input = { file: manifest.file, sha256: manifest.sha256 };
  const beforeSend = ctx.hooks?.beforeSend;
  return {
    mode: ctx.command === 'plan' ? 'plan' : 'run',
    inDoubtFailsInput: ctx.command === 'watch',
    manifest,
    displayName: ctx.displayName ?? manifest.file,
    client,
    catalogue: ctx.catalogue,
    ...(ctx.artwork ? { artwork: ctx.artwork.forInput() } : {}),
    ...(ctx.artworkStore ? { artworkStore: ctx.artworkStore.store, artworkFiles: artworkFilesOf(manifest, ctx) } : {}),
    artworkMarginDays: ctx.artworkStore?.marginDays ?? 0,
    ledger,
    account,
    absentAtStart,
    ...(ctx.currency ? { currency: ctx.currency } : {}),
    logger,
    ...(beforeSend ? { beforeSend } : {}),
    guard: ctx.guard ?? NO_LIMITS,
    clock,
    submit: {
      client,
      ledger,
      account,
      verifyUnseen,
      verifiedAbsent,
      input,
      logger,
      clock,
      ...(listing ? { listing } : {}),
    },
  };
}

/** Where this input's `artwork:` files are read from: watch names the drop folder; a bucket input has none. */
function artworkFilesOf(manifest: Manifest<JobList>, ctx: RunContext): InputArtworkFiles {
  const where = ctx.artworkFolder ?? (ctx.command === 'watch' ? 'none' : 'manifest');
  return new InputArtworkFiles(manifest, where, ctx.artworkStore?.maxInputBytes ?? Number.POSITIVE_INFINITY);
}

/**
 * The input's outcome, from every job's: "unavailable" (retry later, exit 3) when the API
 * could not be reached for any job, else "invalid" when the report shows any failure.
 */
function inputStatus(jobs: JobEndList, spooled: SpooledReport): InputStatus {
  const report = spooled.report;
  if (jobs.some((job) => job.unavailable)) return 'unavailable';
  if (!spooled.hasErrors()) return 'ok';
  // Held: every error is a job's reason to wait, or a job held back because another waits.
  const waiting = jobs.some((job) => job.outcome === 'awaiting-approval');
  const failing =
    report.errors.length > 0 ||
    jobs.some((job) => blocksSubmission(job.outcome) && job.outcome !== 'awaiting-approval');
  return waiting && !failing ? 'held' : 'invalid';
}

/** What the outcome says of the jobs' requests: plan's saved-plan records, and the currency. */
function plannedOf(jobs: JobEndList): Pick<InputOutcome, 'planned' | 'currency'> {
  const planned = new Map<number, PlannedJob>();
  for (const job of jobs) if (job.planned) planned.set(job.index, job.planned);
  const currency = jobs.find((job) => job.currency !== undefined)?.currency;
  return { planned, ...(currency === undefined ? {} : { currency }) };
}
