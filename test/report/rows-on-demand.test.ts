import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CsvOrigin, JobList, Manifest } from '../../src/manifest/model.js';
import type { ItemResult, JobResult, JobStatus, ReportError, ResultReport } from '../../src/report/model.js';
import { RowCells, RowsOnDemand, rowCellsOf } from '../../src/report/row-cells.js';

/**
 * result.csv's result columns made row by row as they are written (RowsOnDemand, a run's
 * report) against the table check makes first and may hand to a worker (rowCellsOf): the same
 * cells and text for every row, over shuffled item rows, merged rows, skipped jobs, rows with
 * errors of their own, and items with new SKUs, artwork flags and errors.
 */

const STATUSES: JobStatus[] = ['submitted', 'failed', 'valid', 'invalid', 'in-doubt', 'awaiting-approval'];
const SEP = ';';
const encode = (cells: readonly string[]) => cells.map((c) => (c.includes(SEP) ? `"${c}"` : c)).join(SEP);

const error = (message: string, row?: number): ReportError => ({
  code: 'e.test',
  message,
  field: row === undefined ? 'jobs[0]' : null,
  source: row === undefined ? null : { row, columnName: 'quantity' },
});

const itemArb = fc.record({
  status: fc.constantFrom(...STATUSES),
  sku: fc.option(fc.constantFrom('NEW-1', 'NEW;2'), { nil: null }),
  artwork: fc.constantFrom(null, true, false),
  error: fc.option(fc.constantFrom('bad quantity', 'too; many'), { nil: undefined }),
});

const jobArb = fc.record({
  status: fc.constantFrom(...STATUSES),
  jobNumber: fc.option(fc.integer({ min: 1, max: 99_999 }), { nil: null }),
  error: fc.option(fc.constantFrom('no method', 'API says no'), { nil: undefined }),
  items: fc.array(itemArb, { minLength: 0, maxLength: 4 }),
});

const caseArb = fc.record({
  jobs: fc.array(jobArb, { minLength: 1, maxLength: 12 }),
  skipped: fc.array(fc.constantFrom('not shippable', 'gift card'), { maxLength: 3 }),
  rowErrors: fc.array(fc.nat(60), { maxLength: 5 }),
  merges: fc.array(fc.tuple(fc.nat(60), fc.nat(60)), { maxLength: 4 }),
  gaps: fc.array(fc.nat(2), { minLength: 60, maxLength: 60 }),
  seed: fc.nat(),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function build(c: Case): { report: ResultReport; manifest: Manifest<JobList>; maxRow: number } {
  // Rows in file order, a gap now and then (blank or other rows), dealt to jobs in turn or interleaved.
  let row = 1;
  const nextRow = () => {
    row += 1 + (c.gaps[row % c.gaps.length] ?? 0);
    return row;
  };
  const itemRows: number[][] = c.jobs.map(() => []);
  const order = c.jobs.flatMap((job, j) => job.items.map(() => j));
  if (c.seed % 2 === 1) order.sort((a, b) => ((a * 7 + c.seed) % 5) - ((b * 7 + c.seed) % 5) || a - b);
  for (const j of order) itemRows[j].push(nextRow());
  const jobs: JobResult[] = c.jobs.map((job, j) => ({
    index: j,
    orderNumber: `PO-${j}`,
    status: job.status,
    source: null,
    jobNumber: job.jobNumber,
    dateDue: null,
    totalJobCost: null,
    estimatedCost: null,
    warnings: [],
    errors: job.error === undefined ? [] : [error(job.error)],
    items: job.items.map(
      (item, k): ItemResult => ({
        index: k,
        source: { row: itemRows[j][k] },
        itemType: 'Asset',
        code: 'A1',
        quantity: 1,
        status: item.status,
        newAssetSku: item.sku,
        needsArtworkToBeUploaded: item.artwork,
        errors: item.error === undefined ? [] : [error(item.error)],
      }),
    ),
  }));
  const manifestJobs = jobs.length;
  for (const reason of c.skipped) {
    const at = nextRow();
    jobs.push({
      ...jobs[0],
      index: jobs.length,
      status: 'skipped',
      reason,
      jobNumber: null,
      errors: [],
      items: [{ ...(jobs[0].items[0] ?? {}), index: 0, source: { row: at }, status: 'skipped' } as ItemResult],
    });
  }
  const maxRow = row + 3;
  const mergedRows = c.merges.map(([r, i]): [number, number] => [r % maxRow, i % maxRow]);
  const csv = { header: ['orderNumber'], skipRows: 0, itemRows, mergedRows } as CsvOrigin;
  const report = {
    input: { file: 'x.csv', sha256: null, format: 'csv' },
    errors: c.rowErrors.map((r) => error(`row ${r} is odd`, r % maxRow)),
    warnings: [],
    jobs,
  } as unknown as ResultReport;
  const manifest = { csv, jobs: { length: manifestJobs } } as unknown as Manifest<JobList>;
  return { report, manifest, maxRow };
}

describe('result.csv rows made as they are written', () => {
  it('are the cells and text of the table made first, for every row', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { report, manifest, maxRow } = build(c);
        const table = new RowCells(rowCellsOf(report, manifest), SEP, encode);
        const manifestJobs = manifest.jobs.length;
        const onDemand = new RowsOnDemand(report, manifest.csv, (j) => report.jobs[j], SEP, encode, manifestJobs);
        const again = new RowsOnDemand(report, manifest.csv, (j) => report.jobs[j], SEP, encode, manifestJobs);
        for (let r = 0; r <= maxRow; r++) {
          expect(onDemand.tailText(r), `row ${r}`).toBe(table.tailText(r));
          expect(again.cells(r), `row ${r}`).toEqual(table.cells(r));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('read each job once for its rows, in the order they come', () => {
    const c: Case = {
      jobs: Array.from({ length: 5 }, (_, j) => ({
        status: 'submitted' as const,
        jobNumber: 100 + j,
        error: undefined,
        items: Array.from({ length: 3 }, () => ({
          status: 'submitted' as const,
          sku: null,
          artwork: false,
          error: undefined,
        })),
      })),
      skipped: [],
      rowErrors: [],
      merges: [],
      gaps: new Array(60).fill(0),
      seed: 0,
    };
    const { report, manifest, maxRow } = build(c);
    const reads: number[] = [];
    const rows = new RowsOnDemand(
      report,
      manifest.csv,
      (j) => {
        reads.push(j);
        return report.jobs[j];
      },
      SEP,
      encode,
      5,
    );
    const text = Array.from({ length: maxRow + 1 }, (_, r) => rows.tailText(r));
    expect(reads).toEqual([0, 1, 2, 3, 4]);
    expect(text.filter((t) => t === ';submitted;101;;false;')).toHaveLength(3);
  });
});
