import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import { readWindowed } from '../../src/manifest/csv/windowed-read.js';
import { itemCountOf, itemRowOf, jobCountOf } from '../../src/manifest/csv/item-rows.js';
import { formatPath, jobIndexOf } from '../../src/manifest/field-path.js';
import { invalidJobs } from '../../src/manifest/diagnostics.js';
import { buildReport } from '../../src/report/build-report.js';
import type { JobList, LoadResult, ManifestJob } from '../../src/index.js';
import { tempFiles } from '../support/temp-files.js';
import { bytesOf, csvText, sampleArb } from '../support/csv-samples.js';

/**
 * A big template CSV read windowed (csv/windowed-read.ts) is the whole read (loadManifest)
 * seen through a window: the same diagnostics in the same order, every job by at(i), every
 * location, every item's row and the hash, whatever the windows' size.
 */

const files = tempFiles('htorder-windowed-read-');

function pathsOf(job: ManifestJob, j: number): string[] {
  const out: string[] = [`jobs[${j}]`, `jobs[${j}].dateDue`, `jobs[${j}].items[99]`, `jobs[${j}].orderNumber`];
  const walk = (value: unknown, at: Array<string | number>) => {
    out.push(formatPath(at));
    if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) walk(v, [...at, Array.isArray(value) ? Number(k) : k]);
  };
  walk(job, ['jobs', j]);
  return out;
}

function jobsOf(list: JobList): ManifestJob[] {
  return Array.from({ length: list.length }, (_, i) => list.at(i) as ManifestJob);
}

async function expectSameAsWholeRead(file: string, windowJobs: number): Promise<void> {
  const whole: LoadResult = await loadManifest(file);
  const read = await readWindowed(file, undefined, windowJobs);
  if (read === undefined) {
    // Only a file without a job (or one that stops parsing) is left to the whole read.
    expect(whole.manifest?.jobs.length ?? 0).toBe(0);
    return;
  }
  try {
    const { manifest } = read;
    const want = whole.manifest;
    expect(want).toBeDefined();
    if (want === undefined) return;
    expect(read.jobFindings.all()).toEqual(whole.diagnostics);
    // As a run takes them: those on no job at once, the jobs' a window at a time (each window
    // put together on its own), the jobs they refuse, and the report check makes of them.
    expect(read.diagnostics).toEqual(whole.diagnostics.filter((d) => jobIndexOf(d.field) === undefined));
    const { all, jobs: refused } = invalidJobs(whole.diagnostics);
    if (!all)
      for (let j = 0; j < want.jobs.length; j++) expect([j, read.jobFindings.refuses(j)]).toEqual([j, refused.has(j)]);
    const report = (x: Pick<Parameters<typeof buildReport>[0], 'manifest' | 'diagnostics' | 'jobFindings'>) =>
      buildReport({
        command: 'plan',
        input: { file, format: 'csv', sha256: want.sha256 },
        startedAt: new Date(0),
        ...x,
      });
    expect(report({ manifest, diagnostics: read.diagnostics, jobFindings: read.jobFindings })).toEqual(
      report({ manifest: want, diagnostics: whole.diagnostics }),
    );
    expect(manifest.sha256).toBe(want.sha256);
    expect(manifest.jobs.length).toBe(want.jobs.length);
    // Backwards, then in order: windows read again after being let go are the same jobs.
    for (let j = want.jobs.length - 1; j >= 0; j--) expect(manifest.jobs.at(j)).toEqual(want.jobs[j]);
    expect(jobsOf(manifest.jobs)).toEqual(want.jobs);
    expect([...manifest.jobs]).toEqual(want.jobs);
    expect(manifest.jobs.at(want.jobs.length)).toBeUndefined();
    // Each job's order number as the index noted it: the whole read's, where it is a string.
    const named = (list: JobList, j: number) => list.orderNumbers?.get(j);
    const own = (job: ManifestJob) => (typeof job.orderNumber === 'string' ? job.orderNumber : undefined);
    expect(Array.from({ length: want.jobs.length }, (_, j) => named(manifest.jobs, j))).toEqual(want.jobs.map(own));
    for (const d of whole.diagnostics)
      if (d.field !== undefined) expect(manifest.sources.locate(d.field)).toEqual(want.sources.locate(d.field));
    want.jobs.forEach((job, j) => {
      for (const path of pathsOf(job, j))
        expect({ path, at: manifest.sources.locate(path) }).toEqual({ path, at: want.sources.locate(path) });
    });
    expect(manifest.sources.locate('version')).toEqual(want.sources.locate('version'));
    const csv = manifest.csv;
    const wantCsv = want.csv;
    if (csv === undefined || wantCsv === undefined) throw new Error('no CsvOrigin');
    expect(jobCountOf(csv)).toBe(jobCountOf(wantCsv));
    for (let j = 0; j < want.jobs.length; j++) {
      expect(itemCountOf(csv, j)).toBe(itemCountOf(wantCsv, j));
      for (let k = 0; k <= itemCountOf(wantCsv, j); k++) expect(itemRowOf(csv, j, k)).toBe(itemRowOf(wantCsv, j, k));
    }
    expect({ header: csv.header, skipRows: csv.skipRows, read: csv.read }).toEqual({
      header: wantCsv.header,
      skipRows: wantCsv.skipRows,
      read: wantCsv.read,
    });
    expect(csv.itemRows).toEqual(wantCsv.itemRows);
  } finally {
    read.close();
  }
}

/** Order numbers that collide in NFC, ZIP codes a spreadsheet shortened, phones it rounded. */
function damagedCsv(rows: Array<[number, number, number]>): string {
  const numbers = ['Café', 'Cafe\u0301', 'SO-1', 'SO-2', '1.23E+11', ''];
  const zips = ['2134', '02134', '118', '2134-1234', ''];
  const countries = ['US', 'Italy', 'DE', ''];
  const lines = ['orderNumber,code,quantity,postalCode,country,phone,deliveryMethod'];
  for (const [n, z, c] of rows)
    lines.push(
      `${numbers[n % numbers.length]},A${n},${z},${zips[z % zips.length]},${countries[c % countries.length]},${c % 2 ? '1.61756E+10' : '555'},${c % 3 ? 'UPSGND' : ''}`,
    );
  return `${lines.join('\n')}\n`;
}

describe('readWindowed', () => {
  it('gives the whole read’s diagnostics, jobs, locations, item rows and hash for any template CSV', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(sampleArb, fc.integer({ min: 1, max: 9 }), async (sample, windowJobs) => {
        const file = await files.write(`sample-${n++}.csv`, bytesOf(sample, csvText(sample)));
        await expectSameAsWholeRead(file, windowJobs);
      }),
      { numRuns: 120 },
    );
    // Each sample is read twice and reported twice: some 15 s alone, twice that beside other work.
  }, 90_000);

  it('repairs, compares order numbers across windows and reports spreadsheet damage as the whole read does', async () => {
    let n = 0;
    const row = fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20));
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 5 }),
        async (rows, w) => {
          const file = await files.write(`damaged-${n++}.csv`, damagedCsv(rows));
          await expectSameAsWholeRead(file, w);
        },
      ),
      { numRuns: 60 },
    );
  }, 90_000);

  it('keeps the first 1,000 findings of a code in file order and sums up the rest, as the whole read', async () => {
    // Rows of 1,200 orders, every one a row too short, scattered so windows hold rows from all over the file.
    const lines = ['orderNumber,code,quantity,comment'];
    for (let r = 0; r < 2400; r++) lines.push(r % 5 === 0 ? `SO-${(r * 7) % 1200},A,x,c` : `SO-${(r * 7) % 1200},A,1`);
    const file = await files.write('many.csv', `${lines.join('\n')}\n`);
    await expectSameAsWholeRead(file, 256);
    const dup = await files.write('header.csv', `orderNumber,code,code\n${'SO-1,A,B\n'.repeat(3)}`);
    await expectSameAsWholeRead(dup, 1);
  });
});
