import { APPROVALS_MARK, APPROVED_PREFIX, contentName, HELD_PREFIX, spendName } from '../pipeline/guard-notes.js';
import type { LedgerEntry, LedgerStore, OnUnreadable } from '../storage/ledger/model.js';
import type { AccountStats } from '../storage/ledger/pg-ledger.js';

/**
 * Moving a shop's ledger into the database (`htorder ledger import`) and seeing what a ledger
 * holds (`htorder ledger stats`), docs/fleet.md.
 */

/** The kinds of account notes a ledger keeps (guard-notes.ts): held inputs, their approvals, the day's spend, the content index. */
const NOTE_KINDS = [HELD_PREFIX, APPROVED_PREFIX, APPROVALS_MARK, spendName(''), contentName('')];

export interface ImportResult {
  /** Entries written into the database (new there, or later than its own). */
  copied: number;
  /** Entries the database had already, in the same or a later state. */
  kept: number;
  /** Notes copied (only those the database did not have). */
  notes: number;
  accounts: number;
}

/**
 * Copies every entry and note of `from` (a state dir's file ledger) into `to`, each under its
 * order's lock in `to`. Idempotent and resumable: an entry is written only when `to` has none
 * or an earlier one (entryRank), so a second import copies nothing, an import cut short goes
 * on where it stopped, and an order the fleet has moved on since is never set back. Notes are
 * copied only where `to` has none. The accounts' records are not: the database vouches for an
 * account only once a run of its own checked the account (other hosts' ledgers may hold orders
 * this one never saw), so each order it has not seen is searched once before its first create.
 * An entry of `from` that cannot be read is told to `unreadable` and not copied: its order is
 * one the database has not seen, searched on the account before it is sent.
 */
export async function importLedger(
  from: LedgerStore,
  to: LedgerStore,
  on: { progress?: (done: number) => void; unreadable: OnUnreadable },
): Promise<ImportResult> {
  const result: ImportResult = { copied: 0, kept: 0, notes: 0, accounts: 0 };
  const accounts = new Set<string>();
  for await (const entry of from.entries(undefined, { unreadable: on.unreadable })) {
    accounts.add(entry.account);
    const key = { account: entry.account, orderNumber: entry.orderNumber };
    const wrote = await to.withLock(key, async (guard) => {
      const there = await to.read(key, { guard });
      if (there && compareEntries(there, entry) >= 0) return false;
      await to.write(entry, { guard });
      return true;
    });
    if (wrote) result.copied++;
    else result.kept++;
    on.progress?.(result.copied + result.kept);
  }
  for (const account of accounts) {
    for (const kind of NOTE_KINDS) {
      for (const name of await from.listNotes(account, kind)) {
        const value = await from.readNote<unknown>(account, name);
        if (value === undefined) continue;
        let copied = false;
        await to.updateNote<unknown>(account, name, async (current) => {
          copied = current === undefined;
          return copied ? value : undefined;
        });
        if (copied) result.notes++;
      }
    }
  }
  result.accounts = accounts.size;
  return result;
}

/**
 * Which of two entries of one order is later: a submitted one before any other (submitted is
 * never undone), then the one with the latest time it records (intent, outcome, cancel), then
 * more sends. 0: the same as far as the ledger can tell.
 */
export function compareEntries(a: LedgerEntry, b: LedgerEntry): number {
  const submitted = Number(a.state === 'submitted') - Number(b.state === 'submitted');
  if (submitted !== 0) return submitted;
  const at = latest(a).localeCompare(latest(b));
  if (at !== 0) return at;
  return a.attempts - b.attempts;
}

function latest(e: LedgerEntry): string {
  return [e.intentAt, e.outcomeAt, e.cancelRequestedAt, e.cancelledAt]
    .filter((t): t is string => typeof t === 'string')
    .map((t) => new Date(t).toISOString())
    .reduce((a, b) => (a > b ? a : b), '');
}

/**
 * Entries per account, oldest and newest intent, and their size as JSON: any ledger, read entry
 * by entry; one that cannot be read is told to `unreadable` and not counted.
 */
export async function entryStats(ledger: LedgerStore, unreadable: OnUnreadable): Promise<AccountStats[]> {
  const byAccount = new Map<string, AccountStats>();
  for await (const e of ledger.entries(undefined, { unreadable })) {
    const s = byAccount.get(e.account) ?? { account: e.account, entries: 0, bytes: 0 };
    s.entries++;
    s.bytes += Buffer.byteLength(JSON.stringify(e));
    if (s.oldest === undefined || e.intentAt < s.oldest) s.oldest = e.intentAt;
    if (s.newest === undefined || e.intentAt > s.newest) s.newest = e.intentAt;
    byAccount.set(e.account, s);
  }
  return [...byAccount.values()].sort((a, b) => (a.account < b.account ? -1 : 1));
}
