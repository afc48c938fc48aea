import { hash } from 'node:crypto';
import type { JobCandidate } from '../api/types.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import { safeName } from '../storage/ledger/safe-name.js';
import { canonicalJson } from './job-hash.js';

/**
 * What the guardrails (docs/guardrails.md) keep in the ledger beside its entries, as account
 * notes (LedgerStore.readNote): a job waiting for approval and its approval, the day's spend
 * and the content index of recent orders. Kept in the ledger so every process and machine
 * sharing it agrees.
 */

/** Why a job waits: a code (`approval.job-cost` …) and a message for people. */
export interface HoldReason {
  code: string;
  /** For the input's reports, which whoever dropped the input may read. */
  message: string;
  /** For the operator only (the ledger's held-job note, `approve --list`), when it says more than `message`. */
  detail?: string;
}

/** A job that waits for approval, and the approval once given. */
export interface ApprovalNote {
  noteVersion: 1;
  orderNumber: string;
  /** jobHash of the manifest entry that was held: an approval is for this fingerprint only. */
  fingerprint: string;
  heldAt: string;
  /** Why it waits, for people (the report's messages). */
  reasons: string[];
  input: { file: string; sha256: string };
  estimate?: number;
  currency?: string;
  approval?: Approval;
}

export interface Approval {
  /** The fingerprint approved (the note's, when it was given). */
  fingerprint: string;
  by: string;
  at: string;
  note?: string;
}

/** What the day's budget has counted (`maxDailyCost`): the estimate of each order let through. */
export interface SpendNote {
  noteVersion: 1;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  orders: Record<string, number>;
}

/**
 * One entry of the content index: the orders lately sent with one content (contentKey), newest
 * last, at most CONTENT_ORDERS of them.
 */
export interface ContentNote {
  noteVersion: 2;
  orders: ContentOrder[];
}

/** An order the ledger's account sent with a content: which, when, and from which input. */
export interface ContentOrder {
  orderNumber: string;
  jobNumber?: number;
  /** When it was created, by the calendar clock (ISO 8601). */
  at: string;
  /**
   * The SHA-256 of the input it came from: orders of one input (the same bytes, whatever the
   * file is called and however often it runs) are never suspected duplicates of each other.
   */
  input: string;
}

/** The newest orders an index entry keeps: enough for several inputs of one night, bounded for any flood. */
export const CONTENT_ORDERS = 8;

const APPROVAL = '.approval-';

export function approvalName(orderNumber: string): string {
  return `${APPROVAL}${safeName(orderNumber)}`;
}

export function readApproval(ledger: LedgerStore, account: string, orderNumber: string) {
  return ledger.readNote<ApprovalNote>(account, approvalName(orderNumber));
}

/** Every job held on the account, approved or not. */
export async function approvalNotes(ledger: LedgerStore, account: string): Promise<ApprovalNote[]> {
  const names = await ledger.listNotes(account, APPROVAL);
  const notes = await Promise.all(names.map((n) => ledger.readNote<ApprovalNote>(account, n)));
  return notes.filter((n): n is ApprovalNote => n !== undefined);
}

/** Whether `note` approves the job with this fingerprint. */
export function approves(note: ApprovalNote | undefined, fingerprint: string): boolean {
  return note?.approval?.fingerprint === fingerprint;
}

export function spendName(day: string): string {
  return `.spent-${day}`;
}

/** The account-wide lock the day's budget is counted under. */
export const SPEND_LOCK = '.spend';

export function spentOf(note: SpendNote | undefined): number {
  return Object.values(note?.orders ?? {}).reduce((sum, n) => sum + n, 0);
}

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export function contentName(key: string): string {
  return `.content-${key}`;
}

/** The orders of an index entry as written by any version (version 1 kept one order, of no known input). */
export function contentOrders(note: unknown): ContentOrder[] {
  if (typeof note !== 'object' || note === null) return [];
  const n = note as {
    noteVersion?: unknown;
    orders?: unknown;
    orderNumber?: unknown;
    jobNumber?: unknown;
    at?: unknown;
  };
  if (n.noteVersion === 1 && typeof n.orderNumber === 'string' && typeof n.at === 'string') {
    const jobNumber = typeof n.jobNumber === 'number' ? { jobNumber: n.jobNumber } : {};
    return [{ orderNumber: n.orderNumber, at: n.at, input: '', ...jobNumber }];
  }
  if (!Array.isArray(n.orders)) return [];
  return (n.orders as Partial<ContentOrder>[]).filter(
    (o): o is ContentOrder =>
      typeof o?.orderNumber === 'string' && typeof o.at === 'string' && typeof o.input === 'string',
  );
}

/** The index entry with `order` added as the newest (an earlier record of the same order number replaced). */
export function withContentOrder(note: unknown, order: ContentOrder): ContentNote {
  const kept = contentOrders(note).filter((o) => o.orderNumber !== order.orderNumber);
  return { noteVersion: 2, orders: [...kept, order].slice(-CONTENT_ORDERS) };
}

/**
 * The orders of an index entry that make a job a suspected duplicate, newest first: sent under
 * another order number, from another input, no longer than `windowMs` before `now` (one from
 * the future, a clock set back, counts as within). None when `windowMs` is 0.
 */
export function suspectedOf(
  orders: readonly ContentOrder[],
  job: { orderNumber: string; input: string },
  now: number,
  windowMs: number,
): ContentOrder[] {
  if (windowMs <= 0) return [];
  return orders
    .filter((o) => o.orderNumber !== job.orderNumber && o.input !== job.input && now - Date.parse(o.at) <= windowMs)
    .reverse();
}

/** Text compared without case, spacing or punctuation: `12 Main St.` and `12  main st` agree. */
function normal(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Delivery address fields that say where an order goes (not how to reach the person). */
const ADDRESS_FIELDS = [
  'contactName',
  'organisation',
  'streetAddress',
  'address2',
  'suburb',
  'city',
  'state',
  'stateCode',
  'postalCode',
  'countryCodeISO2',
] as const;

/** Line fields that say what is ordered (not references that name the order). */
const LINE_FIELDS = ['itemType', 'code', 'quantity', 'attributes', 'garment', 'variantCode', 'sizeQuantities'];

/**
 * The key of an order's content: the normalised delivery address and the lines (what and how
 * many, in any order). Two orders with the same key are suspected duplicates.
 */
export function contentKey(candidate: JobCandidate): string {
  const address = Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, normal(candidate.deliveryAddress[f])]));
  const lines = candidate.items
    .map((item) => {
      const line = item as unknown as Record<string, unknown>;
      return canonicalJson(Object.fromEntries(LINE_FIELDS.map((f) => [f, normal(line[f])])));
    })
    .sort();
  return hash('sha256', canonicalJson({ address, lines }), 'hex').slice(0, 32);
}
