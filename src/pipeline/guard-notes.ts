import { hash } from 'node:crypto';
import type { JobCandidate } from '../api/types.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import { canonicalJson } from './job-hash.js';

/**
 * What the guardrails (docs/guardrails.md) keep in the ledger beside its entries, as account
 * notes (LedgerStore.readNote): the jobs waiting for approval and their approvals, the day's
 * spend and the content index of recent orders. Kept in the ledger so every process and machine
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

/**
 * Approvals are kept per input (its sha256) and per job (order number and fingerprint), so no
 * other input can rewrite or use them: `.held-<sha256>` lists the input's jobs that wait (only
 * a run of that input writes it), `.approved-<sha256>` the approvals `htorder approve` gave
 * them (only approve writes it), and `.approvals` changes with every approval, so a watcher
 * looks at its held inputs again only then.
 */

/** One input's jobs that wait for approval (the note `.held-<sha256>`). */
export interface HeldNote {
  noteVersion: 2;
  input: HeldInput;
  heldAt: string;
  jobs: HeldJob[];
}

export interface HeldInput {
  /** The input as its run named it: the path given to run, or where a watcher processed it. */
  file: string;
  sha256: string;
  /** watch: where the input waits (`…/held/X`). */
  held?: string;
  /** watch: where it was dropped. */
  dropped?: string;
}

export interface HeldJob {
  orderNumber: string;
  /** jobHash of the manifest entry that was held: an approval is for this fingerprint only. */
  fingerprint: string;
  /** Why it waits, for people (the report's messages). */
  reasons: string[];
  estimate?: number;
  currency?: string;
}

/** The approvals given to one input's jobs (the note `.approved-<sha256>`). */
export interface ApprovedNote {
  noteVersion: 2;
  sha256: string;
  approvals: ApprovedJob[];
}

export interface Approval {
  /** The fingerprint approved (the held job's). */
  fingerprint: string;
  by: string;
  at: string;
  note?: string;
}

export interface ApprovedJob extends Approval {
  orderNumber: string;
}

/** What changes with every approval given on the account. */
export interface ApprovalsMark {
  noteVersion: 1;
  at: string;
  serial: string;
}

/** How many jobs of one input may wait for approval: beyond it the input fails (docs/guardrails.md). */
export const MAX_HELD_JOBS = 1000;

/** Approval notes untouched this long are removed, unless their input still waits in a watcher's held/. */
export const APPROVAL_NOTE_MAX_AGE_DAYS = 30;

export const HELD_PREFIX = '.held-';
export const APPROVED_PREFIX = '.approved-';
export const APPROVALS_MARK = '.approvals';

/** The sha256 of an input as a note's name part; anything else (a planted report's) is refused. */
function shaPart(sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not an input's sha256: ${JSON.stringify(sha256.slice(0, 80))}`);
  return sha256;
}

export function heldName(sha256: string): string {
  return `${HELD_PREFIX}${shaPart(sha256)}`;
}

export function approvedName(sha256: string): string {
  return `${APPROVED_PREFIX}${shaPart(sha256)}`;
}

/** The account-wide lock approvals of one input are written under. */
export function approveLock(sha256: string): string {
  return `.approve-${shaPart(sha256)}`;
}

/** The account-wide lock a held input is taken back under: one watcher of several takes it. */
export function takeBackLock(sha256: string): string {
  return `.take-back-${shaPart(sha256)}`;
}

export function readHeld(ledger: LedgerStore, account: string, sha256: string): Promise<HeldNote | undefined> {
  return readSound<HeldNote>(ledger, account, heldName(sha256), (n) => Array.isArray(n.jobs) && n.input !== undefined);
}

export function readApproved(ledger: LedgerStore, account: string, sha256: string): Promise<ApprovedNote | undefined> {
  return readSound<ApprovedNote>(ledger, account, approvedName(sha256), (n) => Array.isArray(n.approvals));
}

/** A note, or undefined when it is missing or not one of ours (damaged, another version): never a throw of its parse. */
async function readSound<T>(
  ledger: LedgerStore,
  account: string,
  name: string,
  sound: (note: T) => boolean,
): Promise<T | undefined> {
  let note: T | undefined;
  try {
    note = await ledger.readNote<T>(account, name);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
  return note !== null && typeof note === 'object' && sound(note) ? note : undefined;
}

/** The approval `note` gives the job with this order number and fingerprint. */
export function approvalIn(
  note: ApprovedNote | undefined,
  orderNumber: string,
  fingerprint: string,
): Approval | undefined {
  const a = note?.approvals.find((x) => x.orderNumber === orderNumber && x.fingerprint === fingerprint);
  return a && { fingerprint: a.fingerprint, by: a.by, at: a.at, ...(a.note === undefined ? {} : { note: a.note }) };
}

/** Whether every job that waits in `held` is approved. */
export function allApproved(held: HeldNote, approved: ApprovedNote | undefined): boolean {
  return held.jobs.every((j) => approvalIn(approved, j.orderNumber, j.fingerprint) !== undefined);
}

/** Each input's approvals, read once per input processed (every job of it asks). */
const approvedOfInput = new WeakMap<object, Promise<ApprovedNote | undefined>>();

/** The approval of one job of `input` (the manifest being processed), or undefined. */
export async function approvalFor(
  ledger: LedgerStore,
  account: string,
  input: { sha256: string },
  orderNumber: string,
  fingerprint: string,
): Promise<Approval | undefined> {
  let note = approvedOfInput.get(input);
  if (!note) {
    note = readApproved(ledger, account, input.sha256);
    approvedOfInput.set(input, note);
    // A failed read is not kept: the next job asks again.
    note.catch(() => approvedOfInput.delete(input));
  }
  return approvalIn(await note, orderNumber, fingerprint);
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

/** The entry without `orderNumber`'s order; undefined when it had none (nothing to write). */
export function withoutContentOrder(note: unknown, orderNumber: string): ContentNote | undefined {
  const orders = contentOrders(note);
  const kept = orders.filter((o) => o.orderNumber !== orderNumber);
  return kept.length === orders.length ? undefined : { noteVersion: 2, orders: kept };
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

/**
 * Content keys by the request they were computed for. A job's key is computed once, in its plan
 * stages (the guard's look for a suspected duplicate, or the job's parking), and its submit, in
 * the run's busiest stretch, is handed the one its parking kept (sameContentKey) instead of
 * normalising and hashing the request again.
 */
const contentKeys = new WeakMap<JobCandidate, string>();

/** contentKey of `candidate`, computed once for it. */
export function contentKeyOf(candidate: JobCandidate): string {
  let key = contentKeys.get(candidate);
  if (key === undefined) {
    key = contentKey(candidate);
    contentKeys.set(candidate, key);
  }
  return key;
}

/**
 * Hands `candidate` the content key `key` of a request it is proven the same as (resolveAgain:
 * the same requestHash, so the same address and lines), for contentKeyOf.
 */
export function sameContentKey(candidate: JobCandidate, key: string): void {
  contentKeys.set(candidate, key);
}
