import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireDist } from '../../support/dist.js';

const run = promisify(execFile);

/** `htorder check` as a user runs it; the exit code and both streams, never a throw. */
async function check(file: string, env: Record<string, string>) {
  try {
    const r = await run(process.execPath, [CLI, 'check', file], { env: { ...process.env, ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('CSV limits are settings (csvMaxColumns, csvMaxRecordBytes, csvMaxFileBytes)', () => {
  let file: string;
  beforeAll(async () => {
    requireDist();
    const dir = await mkdtemp(join(tmpdir(), 'htorder-csv-limits-'));
    file = join(dir, 'orders.csv');
    // Six columns: fine by default, over a limit of five.
    await writeFile(file, 'orderNumber,itemType,code,quantity,country,postalCode\nPO-1,Asset,A10001,10,US,78701\n');
  });

  it('takes the column limit from the environment and names it in a located error', async () => {
    const r = await check(file, { HTORDER_CSV_MAX_COLUMNS: '5' });
    expect(r.code).toBe(1);
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    expect(errors).toMatch(/orders\.csv:1\b.*6 columns, over the limit of 5.*csvMaxColumns/);
  });

  it('leaves a file under the default limits alone', async () => {
    const r = await check(file, {});
    expect(r.stderr).not.toContain('csv.limit');
    expect(r.stderr).not.toContain('over the limit');
  });

  it('refuses a bad value with exit 2 naming the variable', async () => {
    const r = await check(file, { HTORDER_CSV_MAX_RECORD_BYTES: 'lots' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('HTORDER_CSV_MAX_RECORD_BYTES');
  });
});
