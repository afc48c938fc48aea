import { existsSync } from 'node:fs';
import { chmod, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** The entry files of the state dir's ledger (every account, every shard). */
async function entryFiles(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const d of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, d.name);
      if (d.isDirectory()) await walk(path);
      else if (d.name.endsWith('.json') && !d.name.startsWith('.') && dir.includes('/orders/')) found.push(path);
    }
  };
  await walk(join(h.stateDir, 'ledger'));
  return found;
}

/** PO-1 submitted by a first run, its entry then broken by `breakIt`; answers the entry's path. */
async function firstRunThenBreak(breakIt: (path: string) => Promise<void>): Promise<string> {
  const one = await h.write('one.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
  expect((await h.cli('run', [one])).code).toBe(0);
  const [entry] = await entryFiles();
  if (entry === undefined) throw new Error('no entry written');
  await breakIt(entry);
  return entry;
}

async function createdOrders(): Promise<string[]> {
  return (await h.sandbox.admin.jobs()).map((j) => j.orderNumber ?? '?').sort();
}

const zeroFilled = (path: string) => writeFile(path, Buffer.alloc(4));
const both = () =>
  manifest([
    { orderNumber: 'PO-1', items: ITEMS.reorder },
    { orderNumber: 'PO-2', items: ITEMS.reorder },
  ]);

describe('an unreadable ledger entry', () => {
  for (const verify of ['auto', 'always'] as const) {
    it(`fails its order alone, names the file and sends nothing for it (HTORDER_VERIFY_NEW_ORDERS=${verify})`, async () => {
      const path = await firstRunThenBreak(zeroFilled);
      const two = await h.write('two.yaml', both());
      const { code, stderr } = await h.cli('run', [two], { env: { HTORDER_VERIFY_NEW_ORDERS: verify } });
      expect(code).toBe(1);
      expect(await createdOrders()).toEqual(['PO-1', 'PO-2']);
      const report = await h.report(two);
      const [broken, other] = report.jobs;
      expect(other).toMatchObject({ orderNumber: 'PO-2', status: 'submitted' });
      expect(broken).toMatchObject({ orderNumber: 'PO-1', status: 'failed' });
      const error = broken!.errors.find((e) => e.code === 'ledger.entry-unreadable');
      expect(error?.message).toContain(path);
      expect(error?.message).toContain('not JSON');
      expect(error?.message).toContain('searchText=PO-1');
      expect(error?.message).toContain('HTORDER_VERIFY_NEW_ORDERS=always');
      expect(stderr).not.toContain('internal error');
    });
  }

  it('on a ledger that does not vouch yet: its order fails, the others are searched and sent, and it does not begin to vouch', async () => {
    const path = await firstRunThenBreak(zeroFilled);
    const record = join(path, '..', '..', '..', '.account');
    await rm(record);
    const two = await h.write('two.yaml', both());
    expect((await h.cli('run', [two])).code).toBe(1);
    expect(await createdOrders()).toEqual(['PO-1', 'PO-2']);
    expect((await h.report(two)).jobs.map((j) => j.status)).toEqual(['failed', 'submitted']);
    // Until the entry is mended, every order it has not seen is searched before it is sent.
    expect(existsSync(record)).toBe(false);
  });

  it('fails its order in plan too, and sends nothing', async () => {
    const path = await firstRunThenBreak(zeroFilled);
    const two = await h.write('two.yaml', both());
    const { code } = await h.cli('plan', [two]);
    expect(code).toBe(1);
    const report = await h.report(two);
    expect(report.jobs[0]!.errors.map((e) => e.message).join('\n')).toContain(path);
    expect(report.jobs[1]).toMatchObject({ orderNumber: 'PO-2', status: 'valid' });
    expect(await createdOrders()).toEqual(['PO-1']);
  });

  it('an entry with only its first line cut short is an entry no more', async () => {
    await firstRunThenBreak((path) => writeFile(path, '{"ledgerVersion":1,"acc'));
    const two = await h.write('two.yaml', both());
    expect((await h.cli('run', [two])).code).toBe(1);
    expect(await createdOrders()).toEqual(['PO-1', 'PO-2']);
  });

  it.skipIf(process.getuid?.() === 0)(
    'an entry that cannot be opened (mode 000) fails its order with EACCES',
    async () => {
      const path = await firstRunThenBreak((p) => chmod(p, 0o000));
      try {
        const two = await h.write('two.yaml', both());
        expect((await h.cli('run', [two])).code).toBe(1);
        expect(await createdOrders()).toEqual(['PO-1', 'PO-2']);
        const report = await h.report(two);
        const error = report.jobs[0]!.errors.find((e) => e.code === 'ledger.entry-unreadable');
        expect(error?.message).toContain(path);
        expect(error?.message).toContain('EACCES');
      } finally {
        await chmod(path, 0o600);
      }
    },
  );
});
