import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';
import { entryReadError, type LedgerEntry, LedgerEntryUnreadableError } from '../../../src/storage/ledger/model.js';
import { ledgerEntry } from '../../support/ledger-entries.js';
import { tempDirPerTest } from '../../support/temp-files.js';

const account = 'https://api.us.example.com#1001';
const entry = (orderNumber: string): LedgerEntry =>
  ledgerEntry({ account, orderNumber }, { state: 'submitted', intentAt: '2026-11-01T10:00:00.000Z', jobNumber: 100 });

/** A ledger with orders A and B, B's entry file overwritten with `text`; answers B's path. */
async function ledgerWithBroken(text: string | Buffer): Promise<{ ledger: FolderLedger; path: string }> {
  const dir = await tempDirPerTest('htorder-unreadable-');
  const ledger = new FolderLedger(dir);
  await ledger.write(entry('A'), { guard: null });
  await ledger.write(entry('B'), { guard: null });
  const orders = join(dir, 'ledger', (await readdir(join(dir, 'ledger')))[0]!, 'orders');
  for (const shard of await readdir(orders)) {
    for (const name of await readdir(join(orders, shard))) {
      if (!name.startsWith('B-') || !name.endsWith('.json')) continue;
      const path = join(orders, shard, name);
      await writeFile(path, text);
      return { ledger, path };
    }
  }
  throw new Error("B's entry not found");
}

describe('a folder ledger entry that cannot be read', () => {
  for (const [what, text] of [
    ['zero-filled', Buffer.alloc(4)],
    ['empty', ''],
    ['cut short', '{"ledgerVersion":1,"acc'],
    ['an older pretty-printed entry cut short', '{\n  "ledgerVersion": 1,\n'],
  ] as const) {
    it(`${what}: read throws LedgerEntryUnreadableError naming the file, with or without the lock`, async () => {
      const { ledger, path } = await ledgerWithBroken(text);
      const key = { account, orderNumber: 'B' };
      const unreadable = { name: 'LedgerEntryUnreadableError', path, why: 'not JSON' };
      await expect(ledger.read(key)).rejects.toMatchObject(unreadable);
      await expect(ledger.withLock(key, (guard) => ledger.read(key, { guard }))).rejects.toMatchObject(unreadable);
      expect(await ledger.read({ account, orderNumber: 'A' })).toMatchObject({ orderNumber: 'A' });
    });
  }

  it('a listing tells it to `unreadable` and goes on; without one, it throws', async () => {
    const { ledger, path } = await ledgerWithBroken(Buffer.alloc(8));
    const told: string[] = [];
    const listed: string[] = [];
    for await (const e of ledger.entries(undefined, { unreadable: (err) => told.push(err.path) }))
      listed.push(e.orderNumber);
    expect(listed).toEqual(['A']);
    expect(told).toEqual([path]);
    const all = async () => {
      for await (const _ of ledger.entries()) {
      }
    };
    await expect(all()).rejects.toBeInstanceOf(LedgerEntryUnreadableError);
  });
});

describe('a failed read of an entry', () => {
  it("is the entry's own (its order failed alone) only when the file itself refuses it; the store failing is the error as it is", () => {
    const fail = (code: string) => Object.assign(new Error(`${code}: failed`), { code });
    for (const code of ['EACCES', 'EPERM', 'EISDIR', 'ELOOP'])
      expect(entryReadError('/l/e.json', fail(code))).toBeInstanceOf(LedgerEntryUnreadableError);
    expect(entryReadError('/l/e.json', new SyntaxError('Unexpected token'))).toMatchObject({
      name: 'LedgerEntryUnreadableError',
      why: 'not JSON',
    });
    // A share gone, a process out of files: nothing is decided, the run is retried (exit 3).
    for (const code of ['EIO', 'ESTALE', 'EMFILE', 'ENFILE', 'ETIMEDOUT']) {
      const err = fail(code);
      expect(entryReadError('/l/e.json', err)).toBe(err);
    }
  });

  it('of a folder where the entry should be fails that order alone', async () => {
    const { ledger, path } = await ledgerWithBroken('x');
    await rm(path);
    await mkdir(path);
    await expect(ledger.read({ account, orderNumber: 'B' })).rejects.toMatchObject({
      name: 'LedgerEntryUnreadableError',
      why: 'EISDIR',
    });
  });
});
