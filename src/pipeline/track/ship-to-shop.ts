import { trackingPath } from '../../report/report-paths.js';
import { type NewFileOptions, writeFileAtomic } from '../../storage/atomic-write.js';
import type { DeliveryOption } from '../../api/types.js';
import { type Despatched, dispatchRecords, reportRecords } from './shop-records.js';
import {
  carrierOf,
  type DispatchRecord,
  type TrackingFileOptions,
  type TrackingLayout,
  trackingCsv,
} from './shop-tracking.js';
import type { ReportFile } from './targets.js';
import type { TrackResult } from './track.js';

/**
 * After a check: the tracking of every despatched job written for the shop to import
 * (X.tracking.csv next to each report, or all in one file), and the records of the jobs
 * despatched since the previous check, for the `dispatched` notification.
 */
export interface ShipToShopOptions extends Partial<TrackingFileOptions> {
  /** One file for every report's despatched jobs, instead of one beside each report. */
  file?: string;
  /** The account's delivery options (for the carrier); a failure leaves the carrier blank. */
  deliveryOptions: () => Promise<DeliveryOption[]>;
}

export interface ShipToShop {
  /** Tracking files written. */
  written: string[];
  /**
   * Tracking files that could not be written, and the file system's code for why (a folder at
   * the name, a folder the user may not write): the others, and the notifications, go on.
   */
  unwritten: Array<{ path: string; code: string }>;
  /** Jobs despatched since the previous check, one record per tracking number. */
  dispatched: DispatchRecord[];
}

/** `X.result.json` → `X.tracking.csv`. */
export function trackingCsvPath(reportFile: string): string {
  return trackingPath(reportFile.replace(/\.result\.json$/, ''));
}

/**
 * The mode and group of a tracking file made from `reports`: never more readable than any of
 * them (no execute bits), in their group when they share one, else readable by its owner only.
 * A report whose mode is unknown (none read) leaves the file to the umask.
 */
export function fileOf(reports: ReadonlyArray<ReportFile | undefined>): NewFileOptions {
  const known = reports.filter((r): r is ReportFile => r !== undefined);
  if (known.length === 0 || known.length < reports.length) return known.length === 0 ? {} : { mode: 0o600 };
  const mode = known.reduce((m, r) => m & r.mode, 0o666);
  const [gid, ...others] = new Set(known.map((r) => r.gid));
  return others.length === 0 ? { mode, gid } : { mode: mode & 0o600 };
}

export async function shipToShop(result: TrackResult, opts: ShipToShopOptions): Promise<ShipToShop> {
  if (!result.jobs.some((j) => j.tracking.dateOut !== null)) return { written: [], unwritten: [], dispatched: [] };
  // Asked only once something was despatched: a check of jobs in production costs no more calls.
  const options = await opts.deliveryOptions().catch(() => [] as DeliveryOption[]);
  const carrier = (code: string | null): string => {
    const option = options.find((o) => o.code === code);
    return carrierOf(option?.label, option?.isCollection);
  };
  const fileOptions: TrackingFileOptions = { sendReceipt: opts.sendReceipt ?? true };
  const byReport = new Map<string, Despatched[]>();
  const newly = new Set<number>();
  const dispatched: DispatchRecord[] = [];
  for (const job of result.jobs) {
    if (job.tracking.dateOut === null) continue;
    if (job.dispatched) newly.add(job.jobNumber);
    const d = {
      jobNumber: job.jobNumber,
      orderNumber: job.orderNumber ?? String(job.jobNumber),
      tracking: job.tracking,
    };
    if (job.reportFile === undefined) {
      // No report, no shop to key it by: told by htorder's order number, never written.
      if (job.dispatched) dispatched.push(...dispatchRecords(d, undefined, carrier));
      continue;
    }
    byReport.set(job.reportFile, [...(byReport.get(job.reportFile) ?? []), d]);
  }
  const files = new TrackingFiles();
  const all: Array<{ layout: TrackingLayout; records: DispatchRecord[] }> = [];
  for (const [reportFile, despatched] of byReport) {
    const report = result.reports.get(reportFile) ?? {};
    const made = await reportRecords(reportFile, report, despatched, carrier);
    dispatched.push(...made.records.filter((r) => newly.has(r.jobNumber)));
    if (opts.file !== undefined) all.push(made);
    else {
      const text = trackingCsv(made.layout, made.records, fileOptions);
      await files.write(trackingCsvPath(reportFile), text, fileOf([result.files.get(reportFile)]));
    }
  }
  if (opts.file !== undefined && all.length > 0) {
    // One layout when every report's shop takes the same; the generic one for a mix.
    const layouts = new Set(all.map((a) => a.layout));
    const layout: TrackingLayout = layouts.size === 1 ? [...layouts][0] : 'generic';
    const reports = [...byReport.keys()].map((r) => result.files.get(r));
    await files.write(
      opts.file,
      trackingCsv(
        layout,
        all.flatMap((a) => a.records),
        fileOptions,
      ),
      fileOf(reports),
    );
  }
  return { written: files.written, unwritten: files.unwritten, dispatched };
}

/**
 * The tracking files of one check as they are written: the reports already hold the new
 * tracking, so a file the file system refuses is told (`unwritten`), never thrown, and the
 * jobs despatched since the previous check are still notified, once.
 */
class TrackingFiles {
  readonly written: string[] = [];
  readonly unwritten: ShipToShop['unwritten'] = [];

  async write(path: string, text: string, file: NewFileOptions): Promise<void> {
    try {
      await writeFileAtomic(path, text, file);
      this.written.push(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code !== 'string') throw err;
      this.unwritten.push({ path, code });
    }
  }
}
