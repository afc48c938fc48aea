import { rename, stat, utimes, writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { buildManifest } from '../../src/manifest/build-manifest.js';
import { readCsvDocument } from '../../src/manifest/csv/read-csv.js';
import {
  CsvFileChanged,
  type CsvJobIndex,
  indexCsvJobs,
  JobIndexUnsupported,
  openJobs,
  readJobs,
} from '../../src/manifest/csv/job-index.js';
import { sortDiagnostics } from '../../src/manifest/diagnostics.js';
import { formatPath, jobIndexOf } from '../../src/manifest/field-path.js';
import type { CsvLimits } from '../../src/manifest/read-input.js';
import type { Diagnostic, ManifestJob, SourceLocation } from '../../src/manifest/model.js';
import { tempFiles } from '../support/temp-files.js';
import { bytesOf, csvText, sampleArb } from '../support/csv-samples.js';

/**
 * The job index is the whole read taken apart: for any template CSV, the jobs read back window
 * by window, their diagnostics and their source locations are exactly the whole read's
 * (readCsvDocument + buildManifest), and a file changed after indexing is refused.
 */

const files = tempFiles('htorder-job-index-');

/** Every path of a job's values, and some that are not there. */
function pathsOf(job: ManifestJob, j: number): string[] {
  const out: string[] = [formatPath(['jobs', j]), formatPath(['jobs', j, 'dateDue']), `jobs[${j}].items[99]`];
  const walk = (value: unknown, at: Array<string | number>) => {
    out.push(formatPath(at));
    if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) walk(v, [...at, Array.isArray(value) ? Number(k) : k]);
  };
  walk(job, ['jobs', j]);
  for (let i = 0; i < job.items.length; i++) out.push(`jobs[${j}].items[${i}].quantity`);
  return out;
}

async function wholeRead(file: string, csv?: Partial<CsvLimits>) {
  const raw = await readCsvDocument(file, { csv });
  return { raw, manifest: buildManifest(raw) };
}

/** Reads every job back in windows cut at `cuts`. */
async function readBack(index: CsvJobIndex, cuts: number[]) {
  const bounds = [0, ...cuts.map((c) => c % (index.jobCount + 1)).sort((a, b) => a - b), index.jobCount];
  const windows = [];
  for (let w = 0; w + 1 < bounds.length; w++) windows.push(await readJobs(index, bounds[w], bounds[w + 1]));
  return windows;
}

async function expectSameAsWholeRead(file: string, cuts: number[], csv?: Partial<CsvLimits>): Promise<void> {
  const { raw, manifest } = await wholeRead(file, csv);
  const index = await indexCsvJobs(file, { csv });
  expect(index.sha256).toBe(raw.sha256);
  expect(index.diagnostics).toEqual(raw.diagnostics.filter((d) => jobIndexOf(d.field) === undefined));
  const jobs = manifest?.jobs ?? [];
  expect(index.jobCount).toBe(jobs.length);
  const windows = await readBack(index, cuts);
  expect(windows.flatMap((w) => w.jobs)).toEqual(jobs);
  const own = (ds: Diagnostic[]) => sortDiagnostics(ds.filter((d) => jobIndexOf(d.field) !== undefined));
  expect(sortDiagnostics(windows.flatMap((w) => w.diagnostics))).toEqual(own([...raw.diagnostics]));
  for (const w of windows) {
    for (let j = w.from; j < w.to; j++) {
      for (const path of pathsOf(jobs[j], j)) {
        const want: SourceLocation | undefined = manifest?.sources.locate(path);
        expect({ path, at: w.sources.locate(path) }).toEqual({ path, at: want });
      }
    }
    if (manifest !== undefined) expect(w.sources.locate('version')).toEqual(manifest.sources.locate('version'));
  }
}

describe('indexCsvJobs + readJobs', () => {
  it('give the whole read’s jobs, diagnostics and locations for any template CSV, in any windows', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(sampleArb, fc.array(fc.nat(40), { maxLength: 5 }), async (sample, cuts) => {
        const file = await files.write(`sample-${n++}.csv`, bytesOf(sample, csvText(sample)));
        await expectSameAsWholeRead(file, cuts);
      }),
      { numRuns: 150 },
    );
  });

  it('reads back a file of many blocks, with jobs scattered across it', async () => {
    const lines = ['orderNumber,code,quantity,city,comment'];
    for (let r = 0; r < 3000; r++)
      lines.push(`SO-${(r * 7919) % 400},A${r},${r % 50},${r % 3 ? '' : 'Austin'},"note ${r}\n${'x'.repeat(r % 90)}"`);
    const file = await files.write('scattered.csv', `${lines.join('\r\n')}\r\n`);
    await expectSameAsWholeRead(file, [1, 17, 256, 300, 399]);
  });

  it('gives the whole read’s file-level diagnostics and no jobs for a file that stops parsing or meets a limit', async () => {
    const broken = await files.write('broken.csv', 'orderNumber,code\nSO-1,A\nSO-2,"unclosed\n');
    await expectSameAsWholeRead(broken, []);
    expect((await indexCsvJobs(broken)).jobCount).toBe(0);
    const wide = await files.write('wide.csv', 'orderNumber,code\nSO-1,A,B,C,D\n');
    await expectSameAsWholeRead(wide, [], { maxColumns: 3 });
    const big = await files.write('big.csv', `orderNumber,code\n${'SO-1,A\n'.repeat(100)}`);
    await expectSameAsWholeRead(big, [], { maxFileBytes: 200 });
    for (const text of ['', '\n\n', 'orderNumber,code\n', 'code,quantity\nA,1\n'])
      await expectSameAsWholeRead(await files.write(`edge-${text.length}.csv`, text), []);
    const missing = await indexCsvJobs(`${broken}.missing`);
    expect(missing.diagnostics).toEqual((await readCsvDocument(`${broken}.missing`)).diagnostics);
  });

  it('reads a record holding a NUL byte (a file with a byte-order mark), where a scanner’s first look sees binary', async () => {
    const file = await files.write('nul.csv', '\uFEFForderNumber,code,comment\nSO-1,A,"a\u0000b"\nSO-2,B,x\n');
    await expectSameAsWholeRead(file, [1]);
    expect((await readJobs(await indexCsvJobs(file), 0, 1)).jobs[0].items[0].comment).toBe('a\u0000b');
    // The NUL past the first 64 KiB of a window's bytes.
    const far = `\uFEFForderNumber,code,comment\n${'SO-1,A,long enough a row to pass 64 KiB soon\n'.repeat(2000)}SO-1,B,"\u0000"\n`;
    await expectSameAsWholeRead(await files.write('far-nul.csv', far), []);
  });

  it('gives every diagnostic of a window, beyond the whole read’s 1,000 of a code', async () => {
    const file = await files.write('many.csv', `orderNumber,code\n${'SO-1,A,extra\n'.repeat(1200)}`);
    const whole = await readCsvDocument(file);
    expect(whole.diagnostics.filter((d) => d.code === 'csv.row-length')).toHaveLength(1001);
    const w = await readJobs(await indexCsvJobs(file), 0, 1);
    expect(w.diagnostics.filter((d) => d.code === 'csv.row-length')).toHaveLength(1200);
    expect(w.diagnostics.every((d) => d.field?.startsWith('jobs[0].items['))).toBe(true);
  });

  it('reads rows whose line break (CRLF, or a lone CR) falls across two reads of the index pass', async () => {
    for (const eol of ['\r\n', '\r']) {
      let text = 'orderNumber,code,comment\r\n';
      for (let r = 0; text.length < 65_000; r++) text += `SO-${r % 300},A${r},note ${r}${eol}`;
      // The next row's line break starts on the last byte of the first 64 KiB read.
      text += `SO-7,B,${'y'.repeat(65_536 - text.length - 8)}${eol}`;
      expect(text.indexOf(eol, 65_530)).toBe(65_535);
      for (let r = 0; r < 500; r++) text += `SO-${r % 40},C${r},after ${r}${eol}`;
      await expectSameAsWholeRead(await files.write(`straddle-${eol.length}.csv`, text), [3, 100, 250]);
    }
  });

  it('reads a UTF-8 file with a bad byte as the whole read does (its encoding error, the same cells)', async () => {
    const bytes = Buffer.concat([
      Buffer.from('orderNumber,code,comment\nSO-1,A,Café\nSO-2,B,bad '),
      Buffer.from([0xff]),
      Buffer.from(' byte\nSO-1,C,x\n'),
    ]);
    const file = await files.write('bad-byte.csv', bytes);
    expect((await indexCsvJobs(file)).diagnostics.map((d) => d.code)).toEqual(['csv.encoding']);
    await expectSameAsWholeRead(file, [1]);
  });

  it('refuses a UTF-16 file (to be read whole)', async () => {
    const file = await files.write('utf16.csv', iconv.encode('\uFEFForderNumber,code\nSO-1,A\n', 'utf-16le'));
    await expect(indexCsvJobs(file)).rejects.toBeInstanceOf(JobIndexUnsupported);
  });

  it('refuses windows outside the jobs, and a path of a job outside the window', async () => {
    const file = await files.write('range.csv', 'orderNumber,code\nSO-1,A\nSO-2,B\nSO-3,C\n');
    const index = await indexCsvJobs(file);
    await expect(readJobs(index, 2, 4)).rejects.toBeInstanceOf(RangeError);
    await expect(readJobs(index, 2, 1)).rejects.toBeInstanceOf(RangeError);
    const w = await readJobs(index, 1, 2);
    expect(() => w.sources.locate('jobs[0].orderNumber')).toThrow(RangeError);
    expect(w.sources.locate('jobs[5].orderNumber')).toEqual({ file, row: 1 });
  });
});

describe('a file changed after indexing', () => {
  const text = `orderNumber,code,quantity\n${Array.from({ length: 2000 }, (_, r) => `SO-${r >> 1},A${r},${r % 9}`).join('\n')}\n`;

  it('is refused when its bytes change in place, size and time kept', async () => {
    const file = await files.write('edited.csv', text);
    await utimes(file, 1e9, 1e9);
    const index = await indexCsvJobs(file);
    // Another quantity in the last job, the same length: read, it would be another order.
    await writeFile(file, text.replace(/SO-999,A1999,\d/, 'SO-999,A1999,7'));
    await utimes(file, 1e9, 1e9);
    expect((await stat(file)).mtimeMs).toBe(index.identity?.mtimeMs);
    await expect(readJobs(index, 0, 10)).resolves.toMatchObject({ from: 0, to: 10 });
    await expect(readJobs(index, 990, 1000)).rejects.toThrow(CsvFileChanged);
    await expect(readJobs(index, 990, 1000)).rejects.toThrow(/edited\.csv changed after it was read .*differ/);
  });

  it('is refused when another file takes its name', async () => {
    const file = await files.write('replaced.csv', text);
    const index = await indexCsvJobs(file);
    const other = await files.write('other.csv', text.replace(/SO-/g, 'XO-'));
    await rename(other, file);
    await expect(readJobs(index, 0, 10)).rejects.toThrow(/replaced\.csv changed after it was read .*another file/);
  });

  it('is read through a reader’s open handle as indexed when another file takes its name; an edit in place is refused', async () => {
    const file = await files.write('held.csv', text);
    const index = await indexCsvJobs(file);
    const whole = buildManifest(await readCsvDocument(file));
    const reader = await openJobs(index);
    try {
      await rename(await files.write('other2.csv', text.replace(/SO-/g, 'XO-')), file);
      expect((await reader.read(500, 1000)).jobs).toEqual(whole?.jobs.slice(500, 1000));
    } finally {
      await reader.close();
    }
    await writeFile(file, text);
    const edited = await openJobs(await indexCsvJobs(file));
    try {
      await writeFile(file, text.replace('SO-990,A1980,0', 'SO-990,A1980,1'), { flag: 'r+' });
      await expect(edited.read(990, 991)).rejects.toThrow(CsvFileChanged);
      await expect(edited.read(1, 2)).resolves.toMatchObject({ jobs: [{ orderNumber: 'SO-1' }] });
    } finally {
      await edited.close();
    }
  });

  it('is refused when it is shortened or gone', async () => {
    const file = await files.write('shortened.csv', text);
    const index = await indexCsvJobs(file);
    await writeFile(file, text.slice(0, 100));
    await expect(readJobs(index, 0, 1)).rejects.toThrow(CsvFileChanged);
    await rename(file, `${file}.gone`);
    await expect(readJobs(index, 0, 1)).rejects.toThrow(/cannot open it: ENOENT/);
  });
});
