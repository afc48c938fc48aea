import { type Clock, nowIso } from '../core/clock.js';
import type { CompactResult, LedgerStore } from '../storage/ledger/model.js';
import { pruneApprovalNotes } from './approve.js';
import { contentName, contentOrders, spendName } from './guard-notes.js';

/**
 * The ledger's upkeep (docs/reliability.md#how-long-the-ledger-keeps-what): once a day per
 * account, whichever process of those sharing the ledger comes first, what no rule needs any
 * more goes. An order decided longer than `retentionMs` ago is folded into the compact index
 * (never forgotten: a re-run of an old file must not create it again); a content-index note
 * unused for longer than the longest suspected-duplicate window any of those processes uses
 * (plus a day), a daily budget's note of a week ago, and the approval notes of inputs left
 * for APPROVAL_NOTE_MAX_AGE_DAYS are removed.
 */

const DAY_MS = 86_400_000;
/** The account's note of its last upkeep. */
const UPKEEP_NOTE = '.upkeep';
/** How often an account's share of the ledger is kept up. */
const UPKEEP_EVERY_MS = DAY_MS;
/**
 * How long a replaced version of an entry or note (a file ledger's keptName) stays: long past
 * the run that replaced it, so no run frees many files just before or while it creates others.
 */
const KEPT_REPLACED_MS = 60 * 60_000;
/** A daily budget's note is read on its own day only; kept a week for people reading the ledger. */
const SPEND_NOTE_DAYS = 7;
const CONTENT_PREFIX = contentName('');
const SPEND_PREFIX = spendName('');

interface UpkeepNote {
  noteVersion: 1;
  /** When the last upkeep ran (the calendar clock). */
  at: string;
  /** The longest suspected-duplicate window a process sharing the ledger has used (ms). */
  windowMs: number;
}

export interface UpkeepOptions {
  clock: Clock;
  /** ledgerRetention (ms); 0: nothing is folded. */
  retentionMs: number;
  /** The longest suspected-duplicate window this process uses (the setting's, its routes'). */
  windowMs: number;
}

/**
 * Keeps the account's share of `ledger` up if a day has passed since it last was; records
 * this process's window either way, so no other process removes notes this one still reads.
 * What it did, or undefined when it was not due (or the store keeps itself).
 */
export async function upkeepLedger(
  ledger: LedgerStore,
  account: string,
  opts: UpkeepOptions,
): Promise<(CompactResult & { approvals: number }) | undefined> {
  if (!ledger.compact) return undefined;
  const now = opts.clock.now();
  const last = soundNote(await ledger.readNote<unknown>(account, UPKEEP_NOTE).catch(() => undefined));
  const windowMs = Math.max(last?.windowMs ?? 0, opts.windowMs);
  if (last && now - Date.parse(last.at) < UPKEEP_EVERY_MS) {
    if (windowMs > last.windowMs) await ledger.writeNote(account, UPKEEP_NOTE, { ...last, windowMs });
    return undefined;
  }
  // Recorded first: a process that starts meanwhile reads the window this one keeps to.
  const note: UpkeepNote = { noteVersion: 1, at: nowIso(opts.clock), windowMs };
  await ledger.writeNote(account, UPKEEP_NOTE, note);
  const result = await ledger.compact(account, {
    ...(opts.retentionMs > 0 ? { foldBefore: now - opts.retentionMs } : {}),
    keptBefore: now - KEPT_REPLACED_MS,
    notes: [
      { prefix: CONTENT_PREFIX, before: now - windowMs - DAY_MS, at: lastContentAt },
      { prefix: SPEND_PREFIX, before: now - SPEND_NOTE_DAYS * DAY_MS, at: spendDayEnd },
    ],
  });
  // Inputs still waiting in a watcher's held/ keep theirs (the watcher judges those itself).
  const approvals = await pruneApprovalNotes(ledger, account, now, (held) => held?.input.held !== undefined);
  return { ...result, approvals };
}

function soundNote(value: unknown): UpkeepNote | undefined {
  const n = value as Partial<UpkeepNote> | undefined;
  return typeof n?.at === 'string' && typeof n.windowMs === 'number' && !Number.isNaN(Date.parse(n.at))
    ? (n as UpkeepNote)
    : undefined;
}

/** When a content-index note was last added to: its newest order's time. */
function lastContentAt(note: unknown): number | undefined {
  const times = contentOrders(note)
    .map((o) => Date.parse(o.at))
    .filter((t) => !Number.isNaN(t));
  return times.length > 0 ? Math.max(...times) : undefined;
}

/** The end of a daily budget note's day. */
function spendDayEnd(note: unknown): number | undefined {
  const day = (note as { day?: unknown } | undefined)?.day;
  const start = typeof day === 'string' ? Date.parse(`${day}T00:00:00Z`) : Number.NaN;
  return Number.isNaN(start) ? undefined : start + DAY_MS;
}
