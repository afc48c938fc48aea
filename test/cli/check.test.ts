import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { ASSET_ITEM, writeInput } from '../support/manifest-files.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { captureStdio } from '../support/capture-stdio.js';

const VALID = `version: 1\njobs:\n  - orderNumber: PO-1\n    deliveryAddress: { deliveryMethod: UPSGND }\n    items: [${ASSET_ITEM}]\n`;
const INVALID = `version: 1\njobs:\n  - orderNumber: PO-1\n    deliveryAddress: { deliveryMethod: UPSGND }\n    items:\n      - { itemType: Asset, code: A10001, quantity: abc }\n`;

const io = captureStdio();

describe('htorder check', () => {
  it('exits 0 for valid inputs and writes only the two reports', async () => {
    const dir = await tempDirPerTest();
    const file = await writeInput('orders.yaml', VALID, dir);
    expect(await runCli(['check', file])).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['orders.yaml', 'orders.yaml.result.csv', 'orders.yaml.result.json']);
    const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
    expect(report).toMatchObject({
      command: 'check',
      summary: { jobs: 1, byStatus: { valid: 1 } },
      jobs: [{ status: 'valid', jobNumber: null }],
    });
    expect(io.err).toBe(`${file}: ok, 1 job valid\n  reports: ${file}.result.json, ${file}.result.csv\n`);
    expect(io.out).toBe('');
  });

  it('names an input whose reports cannot be written beside it and checks the others: exit 2, no stack trace', async () => {
    const dir = await tempDirPerTest();
    // A name that fits, but whose reports' temporary names pass the file system's 255-byte limit.
    const name = `${'n'.repeat(230)}.csv`;
    const long = await writeInput(
      name,
      'orderNumber,deliveryMethod,itemType,code,quantity\nPO-1,UPSGND,Asset,A10001,50\n',
      dir,
    );
    const fine = await writeInput('fine.yaml', VALID, dir);
    expect(await runCli(['check', long, fine])).toBe(2);
    expect(io.err).toContain(
      `${long}: its reports cannot be written beside it (ENAMETOOLONG) (not checked, no reports written)\n`,
    );
    expect(io.err).toContain(`${fine}: ok, 1 job valid\n`);
    expect(io.err).not.toContain('internal error');
    expect((await readdir(dir)).sort()).toEqual(['fine.yaml', 'fine.yaml.result.csv', 'fine.yaml.result.json', name]);
  });

  it("dates its report by the calendar clock, which the clockOffset setting moves as for run's reports", async () => {
    const file = await writeInput('orders.yaml', VALID);
    vi.stubEnv('HTORDER_CLOCK_OFFSET', '3d');
    try {
      const before = Date.now();
      expect(await runCli(['check', file])).toBe(0);
      const after = Date.now();
      expect(io.err).toMatch(/^warning: the calendar clock is moved by HTORDER_CLOCK_OFFSET: it is \d{4}-\d\d-\d\dT/);
      const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
      for (const at of [report.startedAt, report.finishedAt]) {
        const moved = Date.parse(at) - 3 * 86_400_000;
        expect(moved).toBeGreaterThanOrEqual(before - 1000);
        expect(moved).toBeLessThanOrEqual(after + 1000);
      }
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('exits 0 with warnings, and shows them', async () => {
    const file = await writeInput(
      'orders.yaml',
      VALID.replace('  - orderNumber: PO-1\n', '  - orderNumber: PO-1\n    mustDate: true\n'),
    );
    expect(await runCli(['check', file])).toBe(0);
    expect(io.err).toContain(
      `${file}: ok, 1 job valid, 1 warning(s)\n  warning: ${file}:4:15: jobs[0].mustDate: mustDate has no effect without dateDue\n`,
    );
    await expect(readFile(`${file}.errors.txt`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('exits 1 when any input is invalid, showing errors compiler-style', async () => {
    const dir = await tempDirPerTest();
    const good = await writeInput('good.yaml', VALID, dir);
    const bad = await writeInput('bad.yaml', INVALID, dir);
    expect(await runCli(['check', good, bad])).toBe(1);
    expect(io.err).toContain(
      `${bad}: 1 of 1 job invalid, 0 valid; 1 error\n  ${bad}:6:52: jobs[0].items[0].quantity: must be an integer ≥ 1, got "abc"\n`,
    );
    expect(await readFile(`${bad}.errors.txt`, 'utf8')).toBe(
      'bad.yaml:6:52: jobs[0].items[0].quantity: must be an integer ≥ 1, got "abc"\n',
    );
    expect((await readdir(dir)).sort()).toEqual([
      'bad.yaml',
      'bad.yaml.errors.txt',
      'bad.yaml.result.csv',
      'bad.yaml.result.json',
      'good.yaml',
      'good.yaml.result.csv',
      'good.yaml.result.json',
    ]);
  });

  it('summarises long error lists and points at errors.txt', async () => {
    const items = Array.from({ length: 8 }, (_, i) => `      - { itemType: Asset, code: A${i}, quantity: ${-i} }`).join(
      '\n',
    );
    const file = await writeInput(
      'many.yaml',
      `version: 1\njobs:\n  - orderNumber: PO-1\n    deliveryAddress: { deliveryMethod: X }\n    items:\n${items}\n`,
    );
    expect(await runCli(['check', file])).toBe(1);
    expect(io.err.split('\n').filter((l) => l.startsWith(`  ${file}:`))).toHaveLength(5);
    expect(io.err).toContain(`  ... 3 more in ${file}.errors.txt\n`);
  });

  it('removes a stale errors.txt when the input is fixed', async () => {
    const file = await writeInput('orders.yaml', INVALID);
    expect(await runCli(['check', file])).toBe(1);
    await writeFile(file, VALID);
    expect(await runCli(['check', file])).toBe(0);
    await expect(readFile(`${file}.errors.txt`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('prints a machine summary with --json', async () => {
    const dir = await tempDirPerTest();
    const good = await writeInput('good.yaml', VALID, dir);
    const bad = await writeInput('bad.yaml', INVALID, dir);
    expect(await runCli(['check', '--json', good, bad])).toBe(1);
    const summary = JSON.parse(io.out);
    expect(summary).toMatchObject({
      command: 'check',
      exitCode: 1,
      inputs: [
        {
          file: good,
          status: 'valid',
          format: 'yaml',
          jobs: { total: 1, valid: 1, invalid: 0 },
          errors: 0,
          reports: { json: `${good}.result.json`, csv: `${good}.result.csv` },
        },
        {
          file: bad,
          status: 'invalid',
          jobs: { total: 1, valid: 0, invalid: 1 },
          errors: 1,
          reports: { errors: `${bad}.errors.txt` },
          firstErrors: [expect.stringContaining(':6:52: ')],
        },
      ],
    });
    expect(io.out.trim().split('\n')).toHaveLength(1);
  });

  it('a missing input is a usage error (2): reported, no reports written, other inputs still checked', async () => {
    const dir = await tempDirPerTest();
    const good = await writeInput('good.yaml', VALID, dir);
    const missing = join(dir, 'nope', 'orders.yaml');
    expect(await runCli(['check', missing, good])).toBe(2);
    expect(io.err).toContain(`${missing}: no such file (not checked, no reports written)\n`);
    expect((await readdir(dir)).sort()).toEqual(['good.yaml', 'good.yaml.result.csv', 'good.yaml.result.json']);
  });

  it('a directory or an unsupported extension is a usage error too', async () => {
    const dir = await tempDirPerTest();
    await mkdir(join(dir, 'folder.yaml'));
    const pdf = await writeInput('orders.pdf', VALID, dir);
    expect(await runCli(['check', join(dir, 'folder.yaml')])).toBe(2);
    expect(await runCli(['check', pdf])).toBe(2);
    expect((await readdir(dir)).sort()).toEqual(['folder.yaml', 'orders.pdf']);
  });

  it('exits 2 without files and for an unreadable mapping', async () => {
    expect(await runCli(['check'])).toBe(2);
    const file = await writeInput('orders.csv', 'orderNumber\n');
    expect(await runCli(['check', '--mapping', '/no/such/mapping.yaml', file])).toBe(2);
    expect(io.err).toContain('mapping');
  });

  it('an input over the size cap or with a syntax error is invalid (1) with reports', async () => {
    const dir = await tempDirPerTest();
    const broken = await writeInput('broken.yaml', 'version: 1\njobs: [\n', dir);
    expect(await runCli(['check', broken])).toBe(1);
    const report = JSON.parse(await readFile(`${broken}.result.json`, 'utf8'));
    expect(report.errors[0]).toMatchObject({
      code: expect.stringMatching(/^yaml\./),
      source: { line: expect.any(Number) },
    });
    expect((await readFile(`${broken}.errors.txt`, 'utf8')).startsWith('broken.yaml:')).toBe(true);
  });

  it('checks every sample', async () => {
    const root = new URL('../../samples/', import.meta.url).pathname;
    const dir = await tempDirPerTest();
    const copies: string[] = [];
    for (const entry of await readdir(root, { recursive: true })) {
      if (!/\.(ya?ml|json)$/.test(entry) || entry.includes('.result.')) continue;
      const text = await readFile(join(root, entry), 'utf8');
      if (!text.includes('manifest.schema.json')) continue; // an ERP mapping, not a manifest
      const copy = join(dir, entry.replace(/[\\/]/g, '__'));
      await writeFile(copy, text);
      copies.push(copy);
    }
    expect(copies.length).toBeGreaterThanOrEqual(5);
    expect(await runCli(['check', ...copies])).toBe(0);
  });
});
