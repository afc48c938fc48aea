import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalAccount, importEntries, ledgerAccountKey } from '../../../src/storage/ledger/account-key.js';
import { BucketLedger } from '../../../src/storage/ledger/bucket-ledger.js';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';
import type { LedgerEntry, LedgerStore } from '../../../src/storage/ledger/model.js';
import { s3Fixture } from '../../support/s3.js';

const entry = (account: string, orderNumber: string, state: LedgerEntry['state'] = 'submitted'): LedgerEntry => ({
  ledgerVersion: 1,
  account,
  orderNumber,
  payloadHash: 'h',
  state,
  attempts: 1,
  intentAt: '2026-11-21T00:00:00.000Z',
  ...(state === 'submitted' ? { jobNumber: 700001 } : {}),
});

describe('the ledger account key: region + account id, not the URL spelling', () => {
  it.each([
    'https://api.us.example.com',
    'https://api.us.example.com/',
    'HTTPS://API.US.Example.com//',
    'https://api.us.example.com:443',
    ' https://user@api.us.example.com/?x=1#f ',
  ])('%s is the same account', (url) => {
    expect(ledgerAccountKey(url, 1042)).toBe('https://api.us.example.com#1042');
  });

  it('keeps what tells regions and accounts apart: host, path, port, id', () => {
    const keys = [
      ledgerAccountKey('https://api.us.example.com', 1042),
      ledgerAccountKey('https://api.nz.example.com', 1042),
      ledgerAccountKey('http://127.0.0.1:4010/us', 1042),
      ledgerAccountKey('http://127.0.0.1:4010/nz', 1042),
      ledgerAccountKey('http://127.0.0.1:4011/us', 1042),
      ledgerAccountKey('https://api.us.example.com', 1043),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("maps htorder 0.1's keys (the URL as typed) to the new one", () => {
    expect(canonicalAccount('https://API.us.example.com/#1042')).toBe('https://api.us.example.com#1042');
    expect(canonicalAccount(ledgerAccountKey('http://127.0.0.1:4010/us/', 7))).toBe('http://127.0.0.1:4010/us#7');
  });
});

async function all(ledger: LedgerStore, account?: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of ledger.entries(account)) out.push(e);
  return out;
}

describe('importEntries: old keys and old ledgers are read in, never lost', () => {
  const key = ledgerAccountKey('https://api.us.example.com', 1042);

  it('copies the entries of the same account under another spelling, and leaves other accounts alone', async () => {
    const ledger = new FolderLedger(await mkdtemp(join(tmpdir(), 'htorder-import-')));
    await ledger.write(entry('https://api.us.example.com/#1042', 'PO-1'), { guard: null });
    await ledger.write(entry('https://API.us.example.com#1042', 'PO-2', 'intent'), { guard: null });
    await ledger.write(entry('https://api.us.example.com#9999', 'PO-3'), { guard: null });
    await ledger.write(entry(key, 'PO-4'), { guard: null });
    expect(await importEntries(ledger, ledger, key)).toBe(2);
    const mine = await all(ledger, key);
    expect(mine.map((e) => [e.orderNumber, e.state]).sort()).toEqual([
      ['PO-1', 'submitted'],
      ['PO-2', 'intent'],
      ['PO-4', 'submitted'],
    ]);
    expect(mine.every((e) => e.account === key)).toBe(true);
    // Idempotent.
    expect(await importEntries(ledger, ledger, key)).toBe(0);
  });

  it('never overwrites what the target already records', async () => {
    const from = new FolderLedger(await mkdtemp(join(tmpdir(), 'htorder-import-a-')));
    const to = new FolderLedger(await mkdtemp(join(tmpdir(), 'htorder-import-b-')));
    await from.write(entry('https://api.us.example.com#1042', 'PO-1', 'failed'), { guard: null });
    await to.write(entry(key, 'PO-1', 'submitted'), { guard: null });
    expect(await importEntries(from, to, key)).toBe(0);
    expect((await to.read({ account: key, orderNumber: 'PO-1' }))?.state).toBe('submitted');
  });
});

describe("the account record (.account): read back, and never listed as an order's entry", () => {
  const fx = s3Fixture();

  it.each(['folder', 'bucket'] as const)('%s ledger', async (kind) => {
    const ledger: LedgerStore =
      kind === 'folder'
        ? new FolderLedger(await mkdtemp(join(tmpdir(), 'htorder-record-')))
        : new BucketLedger(fx.store, `t-${Date.now()}/.htorder/ledger/`);
    const key = ledgerAccountKey('https://api.us.example.com', 5);
    expect(await ledger.readAccount(key)).toBeUndefined();
    await ledger.write(entry(key, 'PO-1'), { guard: null });
    const record = { ledgerVersion: 1 as const, account: key, vouchedSince: '2026-11-22T00:00:00.000Z' };
    await ledger.writeAccount(record);
    expect(await ledger.readAccount(key)).toEqual(record);
    expect((await all(ledger)).map((e) => e.orderNumber)).toEqual(['PO-1']);
    expect((await all(ledger, key)).map((e) => e.orderNumber)).toEqual(['PO-1']);
    expect(await ledger.readAccount(ledgerAccountKey('https://api.us.example.com', 6))).toBeUndefined();
  });
});
