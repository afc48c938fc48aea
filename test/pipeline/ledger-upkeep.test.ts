import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { upkeepLedger } from '../../src/pipeline/ledger-upkeep.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { isKeptName } from '../../src/storage/ledger/folder-layout.js';
import { safeName } from '../../src/storage/ledger/safe-name.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * The ledger's upkeep runs once a day per account, whichever process sharing the ledger comes
 * first, and keeps the content notes as long as the longest suspected-duplicate window any of
 * them uses.
 */

const account = 'https://api.us.example.com#1001';
const DAY = 86_400_000;
const T0 = Date.parse('2030-03-01T02:00:00Z');
const at = (ms: number): Clock => ({ now: () => ms });
const content = (n: number) => `.content-${n.toString(16).padStart(32, '0')}`;
const note = (ms: number) => ({
  noteVersion: 2,
  orders: [{ orderNumber: 'X', at: new Date(ms).toISOString(), input: 'i' }],
});

describe('upkeepLedger', () => {
  it('runs once a day, and keeps content notes for the longest window a process sharing the ledger recorded', async () => {
    const ledger = new FolderLedger(await tempDirPerTest('htorder-upkeep-'));
    await ledger.writeNote(account, content(1), note(T0 - 3 * DAY));
    await ledger.writeNote(account, content(2), note(T0 - 30 * DAY));
    // A watcher with a route of a 7-day window looks first: the note of 3 days ago stays.
    const watcher = { retentionMs: 90 * DAY, windowMs: 7 * DAY };
    expect(await upkeepLedger(ledger, account, { clock: at(T0), ...watcher })).toMatchObject({ notes: 1 });
    expect(await ledger.listNotes(account, '.content-')).toEqual([content(1)]);
    // Within the day: not due, whoever asks.
    expect(await upkeepLedger(ledger, account, { clock: at(T0 + DAY / 2), ...watcher })).toBeUndefined();
    // A nightly run of a 12-hour window, two days on: the 7 days recorded still hold.
    const run = { retentionMs: 90 * DAY, windowMs: DAY / 2 };
    expect(await upkeepLedger(ledger, account, { clock: at(T0 + 2 * DAY), ...run })).toMatchObject({ notes: 0 });
    expect(await ledger.listNotes(account, '.content-')).toEqual([content(1)]);
    // Past 7 days and a day since its last use, it goes.
    expect(await upkeepLedger(ledger, account, { clock: at(T0 + 6 * DAY), ...run })).toMatchObject({ notes: 1 });
    expect(await ledger.listNotes(account, '.content-')).toEqual([]);
  });

  it('removes the versions writes replaced once kept for an hour, not before', async () => {
    const state = await tempDirPerTest('htorder-upkeep-');
    const ledger = new FolderLedger(state);
    await ledger.writeNote(account, '.spent-2030-02-27', { noteVersion: 1, day: '2030-02-27', orders: {} });
    await ledger.writeNote(account, '.spent-2030-02-27', { noteVersion: 1, day: '2030-02-27', orders: { X: 1 } });
    const kept = () => readdirSync(join(state, 'ledger', safeName(account))).filter(isKeptName);
    expect(kept()).toHaveLength(1);
    const now = Date.now();
    const opts = { retentionMs: 0, windowMs: 0 };
    expect(await upkeepLedger(ledger, account, { clock: at(now + 30 * 60_000), ...opts })).toMatchObject({ kept: 0 });
    expect(kept()).toHaveLength(1);
    // A day on: that version and the upkeep's own note's last one (kept at the first upkeep) go.
    expect(await upkeepLedger(ledger, account, { clock: at(now + DAY + 60 * 60_000), ...opts })).toMatchObject({
      kept: 2,
    });
    expect(kept()).toEqual([]);
    expect(await ledger.readNote(account, '.spent-2030-02-27')).toMatchObject({ orders: { X: 1 } });
  });

  it('drops the daily budget notes of days a week past, and nothing of a store that has nothing to fold', async () => {
    const ledger = new FolderLedger(await tempDirPerTest('htorder-upkeep-'));
    await ledger.writeNote(account, '.spent-2030-02-20', { noteVersion: 1, day: '2030-02-20', orders: {} });
    await ledger.writeNote(account, '.spent-2030-02-27', { noteVersion: 1, day: '2030-02-27', orders: {} });
    const done = await upkeepLedger(ledger, account, { clock: at(T0), retentionMs: 0, windowMs: 0 });
    expect(done).toMatchObject({ notes: 1, folded: 0 });
    expect(await ledger.listNotes(account, '.spent-')).toEqual(['.spent-2030-02-27']);
    // A store without compact (a bucket's) is left as it is.
    const bare = Object.create(ledger, { compact: { value: undefined } }) as FolderLedger;
    expect(
      await upkeepLedger(bare, account, { clock: at(T0 + 30 * DAY), retentionMs: DAY, windowMs: 0 }),
    ).toBeUndefined();
  });
});
