import type { LedgerEntry, LedgerKey } from '../../src/storage/ledger/model.js';

/** A ledger entry in state "intent" for `key`, with `patch` on top: the folder-ledger tests' common fixture. */
export function ledgerEntry(key: LedgerKey, patch: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    ledgerVersion: 1,
    account: key.account,
    orderNumber: key.orderNumber,
    payloadHash: 'h',
    state: 'intent',
    attempts: 1,
    intentAt: new Date(0).toISOString(),
    ...patch,
  };
}
