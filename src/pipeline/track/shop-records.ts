/**
 * What the shop calls a despatched job: its own order number and the SKUs of the lines it came
 * from, read back from the input's X.result.csv (the export's own cells, then `_row`, `_status`,
 * `_jobNumber` …) through the columns the preset reads them from. Inputs no preset read (YAML,
 * the default template, a mapping of one's own) are keyed by htorder's order number.
 */
import { existsSync } from 'node:fs';
import { dialectOf } from '../../manifest/csv/csv-scanner.js';
import { scanCsvFile } from '../../manifest/csv/read-csv.js';
import type { ResultReport } from '../../report/model.js';
import type { JobTracking } from '../../report/tracking-model.js';
import { CSV_RESULT_COLUMNS } from '../../report/write-result-csv.js';
import { type DispatchRecord, layoutFor, type TrackingLayout } from './shop-tracking.js';

/** The shop's side of one job: its order number as the export wrote it, and its lines. */
interface ShopJob {
  shopOrderNumber: string;
  lines: Array<{ sku: string; quantity: string }>;
}

/** The export columns the preset reads the order number, SKU and quantity from. */
interface ShopColumns {
  preset: string;
  order: string;
  sku?: string;
  quantity?: string;
}

/** The columns of `preset` (undefined: recognised from `header`) its orderNumber, code and quantity fields read first. */
async function shopColumns(preset: string | undefined, header: readonly string[]): Promise<ShopColumns | undefined> {
  const { presetSignatures, recogniseHeader } = await import('../../manifest/mapping/recognise.js');
  let name = preset;
  if (name === undefined) {
    const verdict = recogniseHeader(header, presetSignatures());
    if (verdict.kind !== 'match') return undefined;
    name = verdict.preset;
  }
  const [{ loadMapping }, { compileExpression }, { selectVariant }] = await Promise.all([
    import('../../manifest/mapping/load-mapping.js'),
    import('../../manifest/mapping/expressions.js'),
    import('../../manifest/mapping/preset-columns.js'),
  ]);
  // The form of the export this header is (a variant names its own columns).
  const { mapping } = selectVariant(await loadMapping(name), header);
  const first = (field: string): string | undefined => {
    const source = mapping.fields?.[field];
    return source === undefined || source === null
      ? undefined
      : compileExpression(source, mapping.lookupTables ?? {}).columns[0];
  };
  const order = first('orderNumber');
  return order === undefined ? undefined : { preset: name, order, sku: first('code'), quantity: first('quantity') };
}

/**
 * The shop's order number and lines of each of `jobNumbers`, from the report's X.result.csv;
 * empty when the input is no shop export a preset reads (or the file is gone).
 */
export async function shopJobs(
  resultCsv: string,
  preset: string | undefined,
  jobNumbers: ReadonlySet<number>,
): Promise<{ preset?: string; jobs: Map<number, ShopJob> }> {
  const jobs = new Map<number, ShopJob>();
  if (!existsSync(resultCsv) || jobNumbers.size === 0) return { jobs };
  let header: string[] | undefined;
  const rows: string[][] = [];
  const scan = scanCsvFile(resultCsv, dialectOf(undefined), {
    header: (cells) => {
      header = cells.map((c) => c.trim());
    },
    record: (cells) => {
      rows.push(cells);
    },
  });
  let columns: ShopColumns | undefined;
  let at: { order: number; sku: number; quantity: number; status: number; job: number } | undefined;
  for await (const _ of scan) {
    if (header !== undefined && at === undefined) {
      const own = header.slice(0, header.lastIndexOf(CSV_RESULT_COLUMNS[0]));
      columns = await shopColumns(preset, own);
      if (columns === undefined) return { jobs };
      at = {
        order: own.indexOf(columns.order),
        sku: columns.sku === undefined ? -1 : own.indexOf(columns.sku),
        quantity: columns.quantity === undefined ? -1 : own.indexOf(columns.quantity),
        status: header.lastIndexOf('_status'),
        job: header.lastIndexOf('_jobNumber'),
      };
    }
    // Rows of the jobs asked about only: a big export's other rows are dropped as they come.
    for (const cells of rows.splice(0)) if (at) take(cells, at, jobNumbers, jobs);
  }
  return { preset: columns?.preset, jobs };
}

function take(
  cells: readonly string[],
  at: { order: number; sku: number; quantity: number; status: number; job: number },
  wanted: ReadonlySet<number>,
  jobs: Map<number, ShopJob>,
): void {
  const jobNumber = Number(cells[at.job]);
  if (!Number.isInteger(jobNumber) || !wanted.has(jobNumber) || cells[at.status] === 'skipped') return;
  const cell = (i: number): string => (i < 0 ? '' : (cells[i] ?? '').trim());
  let job = jobs.get(jobNumber);
  if (job === undefined) {
    job = { shopOrderNumber: cell(at.order), lines: [] };
    jobs.set(jobNumber, job);
  }
  // Fill-down exports leave the order cell blank after an order's first row.
  if (job.shopOrderNumber === '') job.shopOrderNumber = cell(at.order);
  const sku = cell(at.sku);
  if (sku !== '') job.lines.push({ sku, quantity: cell(at.quantity) });
}

/** One despatched job of a report, with what the API said of it. */
export interface Despatched {
  jobNumber: number;
  orderNumber: string;
  tracking: JobTracking;
}

/**
 * The dispatch records of one report's despatched jobs, in the layout of the shop its input
 * came from. `carrier`: the carrier of a delivery option's code.
 */
export async function reportRecords(
  reportFile: string,
  report: Pick<ResultReport, 'mapping'>,
  despatched: readonly Despatched[],
  carrier: (deliveryMethod: string | null) => string,
): Promise<{ layout: TrackingLayout; records: DispatchRecord[] }> {
  const resultCsv = `${reportFile.replace(/\.result\.json$/, '')}.result.csv`;
  const wanted = new Set(despatched.map((d) => d.jobNumber));
  const shop = await shopJobs(resultCsv, report.mapping?.preset, wanted);
  const records = despatched.flatMap((d) => dispatchRecords(d, shop.jobs.get(d.jobNumber), carrier));
  return { layout: layoutFor(shop.preset), records };
}

/** A record per tracking number of a despatched job (one with none: a collection, or tracking not yet given). */
export function dispatchRecords(
  d: Despatched,
  shop: ShopJob | undefined,
  carrier: (deliveryMethod: string | null) => string,
): DispatchRecord[] {
  const base = {
    orderNumber: d.orderNumber,
    shopOrderNumber: shop?.shopOrderNumber || d.orderNumber,
    jobNumber: d.jobNumber,
    carrier: carrier(d.tracking.deliveryMethod ?? null),
    despatchDate: (d.tracking.dateOut ?? '').slice(0, 10),
    lines: shop?.lines ?? [],
  };
  const shipments =
    d.tracking.tracking.length > 0 ? d.tracking.tracking : [{ trackingNumber: null, trackingLink: null }];
  return shipments.map((t) => ({
    ...base,
    trackingNumber: t.trackingNumber ?? '',
    trackingLink: t.trackingLink ?? '',
  }));
}
