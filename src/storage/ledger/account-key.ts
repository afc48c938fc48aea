import type { LedgerStore, OnUnreadable } from './model.js';

/**
 * The ledger's name for an account: its region and its id (`GET /account`). The spec says the
 * region cannot be discovered through the API — it comes with the credentials, as its hosts —
 * so the region is named by its API host, spelt one way: scheme, host and path lower-cased,
 * default port, trailing slashes, query and user info dropped. Two spellings of one host
 * (`https://API.us.example.com/`, `https://api.us.example.com`) are one account; a second host
 * name for the region is a new key, which the search before the first create covers
 * (docs/architecture.md#exactly-once).
 */
export function ledgerAccountKey(baseUrl: string, accountId: string | number): string {
  return `${regionName(baseUrl)}#${accountId}`;
}

/**
 * The canonical form of any account key a ledger holds, including those of htorder 0.1
 * (`<baseUrl as configured>#<id>`), so their entries are found again under the new key.
 */
export function canonicalAccount(key: string): string {
  const at = key.lastIndexOf('#');
  if (at < 0) return key;
  return ledgerAccountKey(key.slice(0, at), key.slice(at + 1));
}

function regionName(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    return baseUrl.trim().toLowerCase().replace(/\/+$/, '');
  }
  const path = url.pathname.replace(/\/+/g, '/').replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`.toLowerCase();
}

/**
 * Copies into `to` the entries of `from` that belong to `account` under another spelling of its
 * key (htorder 0.1's, another base-URL spelling) or in another ledger (the old `./.htorder/`),
 * unless `to` already has the order (checked under its lock). States are kept: a copied intent is still settled by
 * search before anything is sent. Returns how many were copied. An entry of `from` that cannot
 * be read is told to `unreadable` and not copied; without it, it throws (LedgerEntryUnreadableError).
 */
export async function importEntries(
  from: LedgerStore,
  to: LedgerStore,
  account: string,
  unreadable?: OnUnreadable,
): Promise<number> {
  let copied = 0;
  for await (const entry of from.entries(undefined, unreadable ? { unreadable } : {})) {
    if (from === to && entry.account === account) continue;
    if (canonicalAccount(entry.account) !== account) continue;
    const key = { account, orderNumber: entry.orderNumber };
    if (await to.read(key)) continue;
    // Under the order's lock: a run of another process may be deciding this order right now.
    const done = await to.withLock(key, async (guard) => {
      if (await to.read(key, { guard })) return false;
      await to.write({ ...entry, account }, { guard, durable: true });
      return true;
    });
    if (done) copied++;
  }
  return copied;
}

/**
 * The ledger's name for a demo account of the in-process sandbox (`--sandbox`): `sandbox/us-demo`.
 * Its URL has a new random port every run, so the key cannot come from it; the sandbox keeps
 * its jobs under the state dir (src/app/sandbox-state.ts), so its ledger must be found again
 * too. A real account's key starts with a URL scheme, never with `sandbox/`.
 */
export function sandboxAccountKey(accountName: string): string {
  return `sandbox/${accountName}`;
}
