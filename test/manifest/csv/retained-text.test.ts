import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DIST, requireDist } from '../../support/dist.js';
import { tempFiles } from '../../support/temp-files.js';

/**
 * A cell is sliced out of the decoded text of a whole chunk, and V8 keeps a long slice as a
 * view of that text: a document that keeps one long value per chunk would hold the entire
 * decoded file. Measured in a child process with --expose-gc, so the heap after a full
 * collection is what the document really keeps, not the test runner's own; a plain node child
 * runs JavaScript, so it reads with the built reader in dist/, as the process tests do.
 */
const READ_CSV = join(DIST, 'manifest/csv/read-csv.js');
const run = promisify(execFile);
const files = tempFiles('htorder-retained-');

/** 600 orders of 20 rows; each row repeats its order's long description (kept once, on the first row). */
function manyChunksOneKeptValueEach(): string {
  const header =
    'orderNumber,description,dateDue,deliveryMethod,contactName,streetAddress,city,postalCode,country,itemType,code,quantity';
  const lines = [header];
  for (let o = 0; o < 600; o++) {
    const description = `Order ${o} for the spring league: ${'home and away kits and training tops / '.repeat(40)}`;
    const contact = `Contact person number ${o}`;
    const street = `${o} Long Industrial Parkway North`;
    for (let r = 0; r < 20; r++) {
      const first = r === 0;
      lines.push(
        [
          `SO-LONG-ORDER-NUMBER-${o}`,
          description,
          first ? '2026-12-01' : '',
          first ? 'UPS Ground' : '',
          first ? contact : '',
          first ? street : '',
          first ? 'Austin' : '',
          first ? '78701' : '',
          first ? 'United States' : '',
          'Asset',
          'A10001',
          '12',
        ].join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

const SCRIPT = `
const { readCsvDocument } = await import(process.argv[1]);
globalThis.gc();
const before = process.memoryUsage().heapUsed;
const raw = await readCsvDocument(process.argv[2]);
globalThis.gc();
const after = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ kept: after - before, jobs: raw.doc.jobs.length, errors: raw.diagnostics.length }));
`;

describe('CSV reader: what the document keeps', () => {
  it('does not keep the decoded text of the chunks its long values were cut from', async () => {
    requireDist();
    const file = await files.write('long-values.csv', manyChunksOneKeptValueEach());
    const size = (await stat(file)).size;
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', SCRIPT, READ_CSV, file],
      { encoding: 'utf8' },
    );
    const result = JSON.parse(stdout) as { kept: number; jobs: number; errors: number };
    expect(result.jobs).toBe(600);
    expect(result.errors).toBe(0);
    // ~20 MB of text; the document itself (600 jobs, 12,000 small items) is ~2 MB. Keeping a
    // view per chunk held all of it (measured: 21 MB for this 19.8 MB file).
    expect(size).toBeGreaterThan(10_000_000);
    expect(result.kept).toBeLessThan(size / 3);
  });
});
