import pLimit from 'p-limit';
import type { ApiClient } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import type { LedgerStore } from '../ledger/model.js';
import type { Logger } from '../log/logger.js';
import { isError } from '../manifest/diagnostics.js';
import { loadManifest } from '../manifest/load-manifest.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { Diagnostic, Manifest } from '../manifest/model.js';
import { INPUT_NOT_FOUND, INPUT_UNREADABLE, INPUT_UNSUPPORTED } from '../manifest/read-input.js';
import { buildReport, reportHasErrors, toReportError, toReportSource } from '../report/build-report.js';
import type { JobResult, ReportCommand, ResultReport } from '../report/model.js';
import type { WrittenReports } from '../report/write-reports.js';
import type { AccountCatalogue } from '../resolve/catalogue.js';
import { resolveJob, type ResolvedJob } from '../resolve/resolve-job.js';
import { apiDiagnostics } from './api-diagnostics.js';
import { declarativeChanges, patchableOf } from './apply-changes.js';
import { jobHash } from './job-hash.js';
import { ReportWriter } from '../report/report-writer.js';
import { ledgerStatus, settleInDoubt, submitJob, type SubmitContext, type SubmitOutcome } from './submit-job.js';

/**
 * One input through the pipeline (docs/architecture.md#the-pipeline):
 *   load + check → [run: ledger look-up] → resolve + preflight + estimate → dry run
 *   → [run: submit exactly once] → reports.
 * Each stage takes the report as it stands and moves jobs forward; a job that failed a stage
 * is not looked at again. The report is rewritten after every submit outcome.
 */

export type PipelineCommand = 'plan' | 'run';

export interface PipelineContext {
  command: PipelineCommand;
  /** Submit the valid jobs even when others of the manifest failed (default: all or nothing). */
  partial: boolean;
  concurrency: number;
  mapping?: Mapping;
  client: ApiClient;
  /** One per account per run: lookups are shared by every input of the run, never across accounts. */
  catalogue: AccountCatalogue;
  ledger: LedgerStore;
  /** Ledger account key (region base URL + account id). */
  account: string;
  logger: Logger;
  onProgress?: (event: ProgressEvent) => void;
  /** Resend limits and waits (tests shorten them). */
  submit?: Pick<SubmitContext, 'maxSends' | 'wait'>;
  /** The command named in the reports when it is not `command` itself (`watch` runs as `run`). */
  reportCommand?: ReportCommand;
}

export interface ProgressEvent {
  file: string;
  /** `plan`: ledger look-up, changes, resolve, preflight and dry run, job by job. */
  stage: 'plan' | 'submit' | 'done';
  done: number;
  total: number;
}

export type InputStatus = 'ok' | 'invalid' | 'unreadable' | 'unavailable';

export interface InputOutcome {
  file: string;
  status: InputStatus;
  report?: ResultReport;
  reports?: WrittenReports;
  /** Resolved jobs by index (for the plan table). */
  resolved: Map<number, ResolvedJob>;
  /** Why an unreadable input could not be processed. */
  problem?: string;
}

const USAGE_CODES = new Set([INPUT_NOT_FOUND, INPUT_UNREADABLE, INPUT_UNSUPPORTED]);

export async function processInput(file: string, ctx: PipelineContext): Promise<InputOutcome> {
  const startedAt = new Date();
  const loaded = await loadManifest(file, ctx.mapping ? { mapping: ctx.mapping } : {});
  const resolved = new Map<number, ResolvedJob>();
  const usage = loaded.diagnostics.find((d) => USAGE_CODES.has(d.code));
  if (usage) return { file, status: 'unreadable', problem: usage.message, resolved };

  const report = buildReport({ command: ctx.reportCommand ?? ctx.command, input: loaded.input, manifest: loaded.manifest, diagnostics: loaded.diagnostics, startedAt });
  const writer = new ReportWriter(report, { manifest: loaded.manifest, mapping: ctx.mapping });
  const manifest = loaded.manifest;
  const state = { unavailable: false };
  if (manifest && report.jobs.length > 0) {
    await runStages(manifest, report, resolved, writer, state, ctx);
  }
  report.finishedAt = new Date().toISOString();
  const reports = await writer.flush();
  ctx.onProgress?.({ file, stage: 'done', done: report.jobs.length, total: report.jobs.length });
  const status: InputStatus = state.unavailable ? 'unavailable' : reportHasErrors(report) ? 'invalid' : 'ok';
  return { file, status, report, reports, resolved };
}

async function runStages(
  manifest: Manifest,
  report: ResultReport,
  resolved: Map<number, ResolvedJob>,
  writer: ReportWriter,
  state: { unavailable: boolean },
  ctx: PipelineContext,
): Promise<void> {
  // Twice as many jobs as API calls in flight: while some jobs wait on the API, others take
  // their ledger lock and write their intent to disk. The client itself caps the requests
  // in flight at `concurrency`, which is what the API sees.
  const limit = pLimit(ctx.concurrency * 2);
  const hashes = manifest.jobs.map((job) => jobHash(job));
  const submitCtx: SubmitContext = {
    client: ctx.client,
    ledger: ctx.ledger,
    account: ctx.account,
    input: { file: manifest.file, sha256: manifest.sha256 },
    logger: ctx.logger,
    ...ctx.submit,
  };
  const valid = (): JobResult[] => report.jobs.filter((j) => j.status === 'valid');
  const stage = async (name: ProgressEvent['stage'], jobs: JobResult[], work: (job: JobResult) => Promise<void>): Promise<void> => {
    let done = 0;
    ctx.onProgress?.({ file: manifest.file, stage: name, done, total: jobs.length });
    await Promise.all(
      jobs.map((job) =>
        limit(async () => {
          try {
            await work(job);
          } catch (err) {
            // Only infrastructure failures get here (unreachable API, credentials refused,
            // disk): the job is not decided. Refusals of the job itself are diagnostics.
            state.unavailable = true;
            job.status = job.status === 'in-doubt' ? 'in-doubt' : 'failed';
            addDiagnostics(job, apiDiagnostics(err, manifest, job.index), manifest);
            ctx.logger.error({ file: manifest.file, orderNumber: job.orderNumber, err: errorText(err) }, 'job could not be processed');
          }
          ctx.onProgress?.({ file: manifest.file, stage: name, done: ++done, total: jobs.length });
        }),
      ),
    );
  };

  // Each job flows on its own through look-up, changes, resolve and dry run: only submitting
  // waits for every job (all or nothing), so one job's lookups overlap others' dry runs.
  const lookUpLedger = async (job: JobResult): Promise<void> => {
    // Orders the ledger already knows are reported as such and cost no further calls. `plan`
    // only reads the ledger; `run` also settles orders an earlier run left in doubt.
    const outcome =
      (await ledgerStatus(submitCtx, job.orderNumber!, hashes[job.index]!)) ??
      (ctx.command === 'run' ? await settleInDoubt(submitCtx, job.orderNumber!, hashes[job.index]!) : undefined);
    if (outcome) applySubmitOutcome(job, outcome, manifest);
  };
  const applyChanges = async (job: JobResult): Promise<void> => {
    // Declarative changes (issue 9): cancel / PATCH of submitted jobs, or plan's diff of them.
    const r = await declarativeChanges({ mode: ctx.command, client: ctx.client, ledger: ctx.ledger, logger: ctx.logger, jobIndex: job.index, sources: manifest.sources }, manifest.jobs[job.index]!, {
      account: ctx.account,
      hash: hashes[job.index]!,
      submitted: job.status === 'already-submitted',
    });
    addDiagnostics(job, r.diagnostics, manifest);
    // A job not submitted yet with `cancel: true` must never be submitted: refused here.
    if (job.status === 'valid' && r.diagnostics.some(isError)) job.status = 'invalid';
    if (r.state === 'unavailable') state.unavailable = true;
  };
  const resolve = async (job: JobResult): Promise<void> => {
    const r = await resolveJob(manifest, job.index, ctx.catalogue);
    resolved.set(job.index, r);
    job.estimatedCost = r.estimate.total ?? null;
    if (r.candidate.dateDue) job.dateDue = r.candidate.dateDue;
    addDiagnostics(job, r.diagnostics, manifest);
    if (r.diagnostics.some(isError)) job.status = 'invalid';
  };
  const dryRun = async (job: JobResult): Promise<void> => {
    try {
      await ctx.client.jobs.validate(resolved.get(job.index)!.candidate);
    } catch (err) {
      if (!isRefusal(err)) throw err;
      job.status = 'invalid';
      addDiagnostics(job, apiDiagnostics(err, manifest, job.index), manifest);
    }
  };
  await stage('plan', valid(), async (job) => {
    await lookUpLedger(job);
    if (job.status === 'valid' || job.status === 'already-submitted') await applyChanges(job);
    if (job.status === 'valid') await resolve(job);
    if (job.status === 'valid') await dryRun(job);
  });

  if (ctx.command !== 'run') return;

  const held = !ctx.partial && report.jobs.some((j) => j.status === 'invalid' || j.status === 'failed' || j.status === 'in-doubt');
  if (held) {
    for (const job of valid()) {
      job.status = 'not-submitted';
      job.errors.push({
        code: 'run.held-back',
        message: 'valid, but not submitted because another job of this manifest failed (all or nothing; use --partial to submit the valid jobs)',
        field: `jobs[${job.index}]`,
        source: toReportSource(manifest.sources.locate(`jobs[${job.index}]`), manifest.file),
      });
    }
    return;
  }
  await stage('submit', valid(), async (job) => {
    const r = resolved.get(job.index)!;
    const outcome = await submitJob(submitCtx, { orderNumber: r.orderNumber, hash: hashes[job.index]!, candidate: r.candidate, patchable: patchableOf(manifest.jobs[job.index]!) });
    applySubmitOutcome(job, outcome, manifest);
    if (outcome.unavailable) state.unavailable = true;
    ctx.logger.info({ file: manifest.file, orderNumber: job.orderNumber, status: job.status, jobNumber: job.jobNumber }, 'job outcome');
    writer.schedule();
  });
}

/** A refusal of the job itself (its content), as opposed to the API being unavailable. */
function isRefusal(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.kind !== 'http' || err.status === null) return false;
  // validateOnly: a 500 "usually means an invalid payload" (spec); the client already retried it once.
  return (err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 429) || err.status === 500;
}

function applySubmitOutcome(job: JobResult, o: SubmitOutcome, manifest: Manifest): void {
  job.status = o.status;
  const e = o.entry;
  if (e?.jobNumber !== undefined) job.jobNumber = e.jobNumber;
  if (e?.dateDue) job.dateDue = e.dateDue;
  if (e?.totalJobCost !== undefined) job.totalJobCost = e.totalJobCost;
  // The API adds lines in the order supplied, so line k of the response is item k.
  job.items.forEach((item, k) => {
    const line = e?.lines?.[k];
    if (line) {
      item.newAssetSku = line.newAssetSku;
      item.needsArtworkToBeUploaded = line.needsArtworkToBeUploaded;
    }
    if (item.errors.length === 0) item.status = job.status;
  });
  const where = `jobs[${job.index}]`;
  if (o.changedAfterSubmit) {
    addDiagnostics(job, [{
      severity: 'error',
      code: 'ledger.changed-after-submit',
      message: `order ${JSON.stringify(job.orderNumber)} was already submitted as job ${e?.jobNumber ?? '?'} (${e?.outcomeAt ?? e?.intentAt}); this entry has changed since, and the change was NOT sent`,
      field: where,
      source: manifest.sources.locate(where),
    }], manifest);
  }
  if (o.status === 'failed' || o.status === 'in-doubt') {
    const diagnostics = o.error ? apiDiagnostics(o.error, manifest, job.index) : [];
    if (o.status === 'in-doubt') {
      diagnostics.unshift({
        severity: 'error',
        code: 'run.in-doubt',
        message: 'the job may or may not have been created and the API could not be searched to find out; run again later: it is settled by search before anything is sent',
        field: where,
        source: manifest.sources.locate(where),
      });
    }
    addDiagnostics(job, diagnostics, manifest);
  }
}

/**
 * Files diagnostics on the job or its item, like buildReport does for check's diagnostics.
 * The summary counts are recomputed when the report is written, not here (O(jobs) each).
 */
function addDiagnostics(job: JobResult, diagnostics: readonly Diagnostic[], manifest: Manifest): void {
  for (const d of diagnostics) {
    const error = toReportError(d, manifest.file);
    const item = /^jobs\[\d+\]\.items\[(\d+)\]/.exec(d.field ?? '');
    const target = item ? job.items[Number(item[1])] : undefined;
    if (!isError(d)) job.warnings.push(error);
    else if (target) {
      target.errors.push(error);
      target.status = 'invalid';
    } else job.errors.push(error);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
