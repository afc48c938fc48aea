import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { CONFIG_EXAMPLE, CSV_TEMPLATE_COLUMNS, MAPPING_SKELETON } from '../../src/cli/init/templates.js';
import { parseConfigFile } from '../../src/core/config/config-file.js';
import { TEMPLATE_BY_NAME } from '../../src/manifest/csv/template.js';
import { parseMapping } from '../../src/manifest/mapping/load-mapping.js';
import { captureStdio } from '../support/capture-stdio.js';

const FILES = [
  'htorder.config.example.yaml',
  'mapping.yaml',
  'orders-template.csv',
  'orders.yaml',
  'schemas/manifest.schema.json',
  'schemas/mapping.schema.json',
];

const io = captureStdio();
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function temp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'htorder-init-'));
  dirs.push(d);
  return d;
}

const listing = async (dir: string): Promise<string[]> =>
  ((await readdir(dir, { recursive: true })) as string[]).filter((f) => f !== 'schemas').sort();

describe('htorder init', () => {
  it('writes the starter files into a new folder and says what to do next', async () => {
    const dir = join(await temp(), 'my-orders');
    expect(await runCli(['init', dir])).toBe(0);
    expect(await listing(dir)).toEqual(FILES.slice().sort());
    expect(io.err).toContain(`wrote ${join(dir, 'orders.yaml')}`);
    expect(io.err).toContain('htorder plan --sandbox');
  });

  it('the starter manifest passes htorder check and htorder plan --sandbox', async () => {
    const dir = await temp();
    expect(await runCli(['init', dir])).toBe(0);
    const manifest = join(dir, 'orders.yaml');
    expect(await runCli(['check', manifest]), io.err).toBe(0);
    expect(await runCli(['plan', '--sandbox', '--json', manifest]), io.err).toBe(0);
    const summary = JSON.parse(io.out.trim().split('\n').at(-1) ?? '');
    expect(summary.inputs[0]).toMatchObject({ status: 'ok', summary: { jobs: 1, errors: 0, byStatus: { valid: 1 } } });
    expect(summary.inputs[0].jobs[0].estimatedCost).toBeGreaterThan(0);
  }, 30_000);

  it('the modelines point at schema copies identical to the package schemas', async () => {
    const dir = await temp();
    expect(await runCli(['init', dir])).toBe(0);
    for (const [file, schema] of [
      ['orders.yaml', 'manifest.schema.json'],
      ['mapping.yaml', 'mapping.schema.json'],
    ]) {
      const first = (await readFile(join(dir, file), 'utf8')).split('\n')[0];
      const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
      expect(m, file).not.toBeNull();
      const copy = await readFile(join(dir, m![1]), 'utf8');
      expect(copy).toBe(await readFile(new URL(`../../schemas/${schema}`, import.meta.url), 'utf8'));
    }
  });

  it('the CSV template is the default template header; filled in, it passes check with and without the mapping skeleton', async () => {
    const dir = await temp();
    expect(await runCli(['init', dir])).toBe(0);
    const header = (await readFile(join(dir, 'orders-template.csv'), 'utf8')).trimEnd();
    expect(header.split(',')).toEqual(CSV_TEMPLATE_COLUMNS);
    for (const c of CSV_TEMPLATE_COLUMNS) expect(TEMPLATE_BY_NAME.has(c), c).toBe(true);
    const row: Record<string, string> = {
      orderNumber: 'PO-1',
      deliveryMethod: 'Customer Pickup',
      country: 'US',
      itemType: 'Asset',
      code: 'A10001',
      quantity: '50',
    };
    const csv = join(dir, 'orders.csv');
    await writeFile(csv, `${header}\n${CSV_TEMPLATE_COLUMNS.map((c) => row[c] ?? '').join(',')}\n`);
    expect(await runCli(['check', csv]), io.err).toBe(0);
    expect(await runCli(['check', '--mapping', join(dir, 'mapping.yaml'), csv]), io.err).toBe(0);
  });

  it('the mapping skeleton is valid as written and with every commented block switched on', () => {
    expect(() => parseMapping(MAPPING_SKELETON, 'mapping.yaml')).not.toThrow();
    const lines = MAPPING_SKELETON.split('\n');
    const from = lines.findIndex((l) => l.startsWith('# Uncomment a block'));
    expect(from).toBeGreaterThan(0);
    const on = lines.map((l, i) => (i > from && l.startsWith('# ') ? l.slice(2) : l)).join('\n');
    const mapping = parseMapping(on, 'mapping.yaml');
    expect(mapping).toMatchObject({ delimiter: ',', skipRows: 0 });
    expect(JSON.stringify(mapping)).toContain('orderNumber');
  });

  it('the config example sets nothing as written; uncommented, its guardrail limits are valid profile keys', () => {
    expect(CONFIG_EXAMPLE.split('\n').every((l) => l === '' || l.startsWith('#'))).toBe(true);
    const on = CONFIG_EXAMPLE.split('\n')
      .filter((l) => /^# (profiles:| {2,})/.test(l))
      .map((l) => l.slice(2))
      .join('\n');
    const parsed = parseConfigFile(on, 'htorder.config.yaml');
    expect(parsed.profiles.shop).toMatchObject({ maxJobCost: 500, maxDailyCost: 20000, duplicateWindow: '7d' });
  });

  it('never overwrites: an existing file stops it with exit 2, names the file, and nothing is written', async () => {
    const dir = await temp();
    await writeFile(join(dir, 'orders.yaml'), 'my own work\n');
    expect(await runCli(['init', dir])).toBe(2);
    expect(io.err).toContain(`${join(dir, 'orders.yaml')} already exists`);
    expect(io.err).toContain('--force');
    expect(await readdir(dir)).toEqual(['orders.yaml']);
    expect(await readFile(join(dir, 'orders.yaml'), 'utf8')).toBe('my own work\n');
  });

  it('a second init in the same folder is refused; --force replaces the files', async () => {
    const dir = await temp();
    expect(await runCli(['init', dir])).toBe(0);
    await writeFile(join(dir, 'orders.yaml'), 'edited\n');
    expect(await runCli(['init', dir])).toBe(2);
    expect(await readFile(join(dir, 'orders.yaml'), 'utf8')).toBe('edited\n');
    expect(await runCli(['init', '--force', dir])).toBe(0);
    expect(await readFile(join(dir, 'orders.yaml'), 'utf8')).toMatch(/^# yaml-language-server/);
    expect(await listing(dir)).toEqual(FILES.slice().sort());
  });
});
