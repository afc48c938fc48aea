import type { LedgerEntry, LedgerPatchable, LedgerState } from './model.js';

/**
 * The compact index of old orders of one shard of a folder ledger (`orders/<shard>/.folded`):
 * one line of JSON per order, what a later run needs of an order past the ledger's retention —
 * that it was sent, as which job, with which fingerprint, the baseline of its declarative
 * changes and its cancel — and nothing else (docs/reliability.md#how-long-the-ledger-keeps-what).
 * Rewritten whole (atomically) by the one compaction of the account; read without a lock.
 */
export interface FoldedOrder {
  /** orderNumber: first, so a line is found by its beginning (foldedIn). */
  o: string;
  s: Exclude<LedgerState, 'intent'>;
  /** payloadHash: a changed entry of an old order is still told, not resent. */
  h: string;
  /** When it was decided (outcomeAt, else intentAt). */
  t: string;
  j?: number;
  p?: LedgerPatchable;
  cr?: string;
  c?: string;
}

/** An entry whose outcome is known: only such are folded (an intent is settled by search first). */
export type DecidedEntry = LedgerEntry & { state: Exclude<LedgerState, 'intent'> };

export function foldOf(entry: DecidedEntry): FoldedOrder {
  return {
    o: entry.orderNumber,
    s: entry.state,
    h: entry.payloadHash,
    t: entry.outcomeAt ?? entry.intentAt,
    ...(entry.jobNumber === undefined ? {} : { j: entry.jobNumber }),
    ...(entry.patchable === undefined ? {} : { p: entry.patchable }),
    ...(entry.cancelRequestedAt === undefined ? {} : { cr: entry.cancelRequestedAt }),
    ...(entry.cancelledAt === undefined ? {} : { c: entry.cancelledAt }),
  };
}

export function entryOf(account: string, f: FoldedOrder): LedgerEntry {
  return {
    ledgerVersion: 1,
    account,
    orderNumber: f.o,
    payloadHash: f.h,
    state: f.s,
    attempts: 1,
    intentAt: f.t,
    outcomeAt: f.t,
    ...(f.j === undefined ? {} : { jobNumber: f.j }),
    ...(f.p === undefined ? {} : { patchable: f.p }),
    ...(f.cr === undefined ? {} : { cancelRequestedAt: f.cr }),
    ...(f.c === undefined ? {} : { cancelledAt: f.c }),
    folded: true,
  };
}

/** The index's text for `orders`, one line each. */
export function foldText(orders: Iterable<FoldedOrder>): string {
  let text = '';
  for (const f of orders) text += `${JSON.stringify(f)}\n`;
  return text;
}

/** Every order of an index's text; a line that is not one (damaged by hand) is skipped. */
export function foldedOrders(text: string): FoldedOrder[] {
  const out: FoldedOrder[] = [];
  for (const line of text.split('\n')) {
    const f = parseLine(line);
    if (f) out.push(f);
  }
  return out;
}

/**
 * The order `orderNumber` of an index's text, without parsing the rest: its line begins with
 * `{"o":<the order number as JSON>,`, as JSON.stringify writes it. The last such line wins.
 */
export function foldedIn(text: string, orderNumber: string): FoldedOrder | undefined {
  const start = `{"o":${JSON.stringify(orderNumber)},`;
  let at = text.lastIndexOf(start);
  while (at > 0 && text[at - 1] !== '\n') at = text.lastIndexOf(start, at - 1);
  if (at < 0) return undefined;
  const end = text.indexOf('\n', at);
  return parseLine(text.slice(at, end < 0 ? undefined : end));
}

function parseLine(line: string): FoldedOrder | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const f = JSON.parse(line) as Partial<FoldedOrder>;
    const sound =
      typeof f.o === 'string' &&
      (f.s === 'submitted' || f.s === 'failed') &&
      typeof f.h === 'string' &&
      typeof f.t === 'string' &&
      (f.j === undefined || typeof f.j === 'number');
    return sound ? (f as FoldedOrder) : undefined;
  } catch {
    return undefined;
  }
}
