import { stringify } from 'csv-stringify/sync';
import type { Manifest } from '../manifest/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { ItemResult, JobResult, ReportError, ResultReport } from './model.js';
import { writeAtomicStream } from './atomic-stream.js';
import { neutraliseCell } from './neutralise.js';

/**
 * X.result.csv: one row per item. For a CSV input, the input's own cells first, verbatim
 * (re-read from the file, not kept in memory), then `_row,_status,_jobNumber,_newAssetSku,
 * _needsArtwork,_error`. For YAML/JSON a fixed column set. Streamed in batches; every cell
 * is neutralised against spreadsheet formula injection.
 */

export const YAML_RESULT_COLUMNS = ['orderNumber', 'itemIndex', 'line', 'itemType', 'code', 'quantity', 'status', 'jobNumber', 'newAssetSku', 'needsArtwork', 'error'] as const;
export const CSV_RESULT_COLUMNS = ['_row', '_status', '_jobNumber', '_newAssetSku', '_needsArtwork', '_error'] as const;

const BATCH_ROWS = 2000;

export interface ResultCsvOptions {
  /** CSV inputs: the manifest (for itemRows and header) and the mapping it was read with. */
  manifest?: Manifest;
  mapping?: Mapping;
}

export async function writeResultCsv(path: string, report: ResultReport, opts: ResultCsvOptions = {}): Promise<void> {
  const rows = report.input.format === 'csv' ? csvInputRows(report, opts) : manifestRows(report);
  await writeAtomicStream(path, batches(rows));
}

async function* batches(rows: AsyncIterable<string[]> | Iterable<string[]>): AsyncGenerator<string> {
  let batch: string[][] = [];
  for await (const row of rows) {
    batch.push(row.map(neutraliseCell));
    if (batch.length >= BATCH_ROWS) {
      yield stringify(batch);
      batch = [];
    }
  }
  if (batch.length > 0) yield stringify(batch);
}

function* manifestRows(report: ResultReport): Generator<string[]> {
  yield [...YAML_RESULT_COLUMNS];
  for (const job of report.jobs) {
    const jobErrors = job.errors.map(errorText);
    if (job.items.length === 0) {
      yield [job.orderNumber ?? '', '', lineOf(job.source), '', '', '', job.status, num(job.jobNumber), '', '', [...fileErrors(report), ...jobErrors].join('; ')];
      continue;
    }
    for (const item of job.items) {
      yield [
        job.orderNumber ?? '',
        String(item.index),
        lineOf(item.source),
        item.itemType ?? '',
        item.code ?? '',
        num(item.quantity),
        item.status,
        num(job.jobNumber),
        item.newAssetSku ?? '',
        bool(item.needsArtworkToBeUploaded),
        [...fileErrors(report), ...jobErrors, ...item.errors.map(errorText)].join('; '),
      ];
    }
  }
}

async function* csvInputRows(report: ResultReport, opts: ResultCsvOptions): AsyncGenerator<string[]> {
  const file = report.input.file;
  const mappingOpt = opts.mapping ? { mapping: opts.mapping } : {};
  let header = opts.manifest?.csv?.header;
  const { readCsvRows, readCsvHeader } = await import('../manifest/csv/read-csv-rows.js');
  if (!header) header = (await readCsvHeader(file, mappingOpt))?.header ?? [];
  yield [...header, ...CSV_RESULT_COLUMNS];

  // row → (job, item), in flat typed arrays: a million rows cost 8 MB, not a million objects.
  const itemRows = opts.manifest?.csv?.itemRows ?? [];
  let maxRow = 0;
  for (const rows of itemRows) for (const r of rows) if (r > maxRow) maxRow = r;
  const rowJob = new Int32Array(maxRow + 1).fill(-1);
  const rowItem = new Int32Array(maxRow + 1).fill(-1);
  itemRows.forEach((rows, j) => rows.forEach((r, k) => ((rowJob[r] = j), (rowItem[r] = k))));

  // File-level errors that point at a row are shown on that row.
  const rowErrors = new Map<number, string[]>();
  for (const e of report.errors) {
    if (e.source && 'row' in e.source) {
      const list = rowErrors.get(e.source.row) ?? [];
      list.push(errorText(e));
      rowErrors.set(e.source.row, list);
    }
  }
  const anyFileError = report.errors.length > 0;

  for await (const { row, cells } of readCsvRows(file, mappingOpt)) {
    const padded = cells.length >= header.length ? cells : [...cells, ...new Array<string>(header.length - cells.length).fill('')];
    const j = row <= maxRow ? rowJob[row] : -1;
    const own = rowErrors.get(row) ?? [];
    if (j < 0) {
      yield [...padded, String(row), own.length > 0 || anyFileError ? 'invalid' : '', '', '', '', own.join('; ')];
      continue;
    }
    const job: JobResult = report.jobs[j];
    const item: ItemResult | undefined = job?.items[rowItem[row]];
    const errors = [...own, ...(job?.errors ?? []).map(errorText), ...(item?.errors ?? []).map(errorText)];
    yield [
      ...padded,
      String(row),
      item?.status ?? job?.status ?? '',
      num(job?.jobNumber ?? null),
      item?.newAssetSku ?? '',
      bool(item?.needsArtworkToBeUploaded ?? null),
      errors.join('; '),
    ];
  }
}

function fileErrors(report: ResultReport): string[] {
  return report.errors.map(errorText);
}

function errorText(e: ReportError): string {
  const s = e.source;
  const where = s && 'row' in s ? s.columnName ?? e.field : e.field;
  return where ? `${where}: ${e.message}` : e.message;
}

function lineOf(source: JobResult['source']): string {
  return source && 'line' in source ? String(source.line) : '';
}

function num(n: number | null): string {
  return n === null ? '' : String(n);
}

function bool(b: boolean | null): string {
  return b === null ? '' : b ? 'true' : 'false';
}
