import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { entryReadError, LedgerEntryUnreadableError, unreadableWhy } from './model.js';
import { shardOf } from './safe-name.js';

/**
 * The names of a folder ledger's account folder (docs/architecture.md#the-folder-ledger):
 *
 *     <account>/.layout              this layout's version and the account's key
 *     <account>/.account, .held-…    the account's record and its few notes
 *     <account>/.locks/              lease tokens, one per process
 *     <account>/orders/<abc>/        entries (`<order>.json`: parseEntry), their locks, the compact index `.folded`
 *     <account>/notes/<ab>/          the notes there is one of per order sent (SHARDED_NOTES)
 *     …/.<name>.<pid>.<n>.old        a replaced version of the entry or note <name>, kept a while (keptName)
 *
 * An older version kept every entry and note flat in `<account>/`, with no `.layout`.
 */
export const ORDERS = 'orders';
export const NOTES = 'notes';
export const LAYOUT = '.layout';
export const FOLDED = '.folded';

/** Hex digits of an order number's hash naming its shard: 4,096 shards. */
const ORDER_SHARD_DIGITS = 3;
/** Hex digits of a sharded note's name's hash naming its shard: 256 shards. */
const NOTE_SHARD_DIGITS = 2;
/** Notes of which there is about one per order sent (the guardrails' content index): kept in shards like the entries. */
const SHARDED_NOTES = ['.content-'];

export function orderShard(orderNumber: string): string {
  return shardOf(orderNumber, ORDER_SHARD_DIGITS);
}

/** The shard a note is kept in, or undefined for a note kept in the account folder itself. */
export function shardedNote(name: string): string | undefined {
  return SHARDED_NOTES.some((p) => name.startsWith(p)) ? shardOf(name, NOTE_SHARD_DIGITS) : undefined;
}

export function layoutText(account: string): string {
  return `${JSON.stringify({ layout: 2, account })}\n`;
}

/**
 * The name a replaced version of the file at `path` is kept under beside it (FolderLedger's
 * keepReplaced): hidden, so never an entry's or a note's, and unique to this process's `n`th.
 */
export function keptName(path: string, n: number): string {
  const at = path.lastIndexOf('/');
  return `${path.slice(0, at + 1)}.${path.slice(at + 1)}.${process.pid}.${n}.old`;
}

const KEPT = /^\..+\.[1-9]\d{0,9}\.\d+\.old$/;

/** Whether `name` is keptName's. */
export function isKeptName(name: string): boolean {
  return KEPT.test(name);
}

export function isEntryName(name: string): boolean {
  return name.endsWith('.json') && !name.startsWith('.');
}

/** What `act` gives, or `none` when the file or folder is not there. */
export async function unlessMissing<T>(act: Promise<T>, none: T): Promise<T> {
  try {
    return await act;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return none;
    throw err;
  }
}

/**
 * The file's text, or '' when there is none; read with this thread's own system calls when
 * `onThisThread` (the ledger's hot path, FolderLedger), else on libuv's pool.
 */
export async function readText(path: string, onThisThread = false): Promise<string> {
  return (await readTextOrNone(path, onThisThread)) ?? '';
}

/** The parsed file, or undefined when there is none (`onThisThread` as readText's). */
export async function readJson<T>(path: string, onThisThread = false): Promise<T | undefined> {
  const text = await readTextOrNone(path, onThisThread);
  return text === undefined ? undefined : (JSON.parse(text) as T);
}

/**
 * The entry in the file (parseEntry), or undefined when there is none (`onThisThread` as
 * readText's). A file that is there but refuses its reading or holds no whole record throws
 * LedgerEntryUnreadableError (entryReadError): it is never "no entry".
 */
export async function readEntry<T>(path: string, onThisThread = false): Promise<T | undefined> {
  let text: string | undefined;
  try {
    text = await readTextOrNone(path, onThisThread);
  } catch (err) {
    throw entryReadError(path, err);
  }
  return text === undefined ? undefined : parsedEntry<T>(path, text);
}

/** parseEntry of the file at `path`, whose text is not an entry thrown as LedgerEntryUnreadableError. */
export function parsedEntry<T>(path: string, text: string): T {
  try {
    return parseEntry<T>(text);
  } catch (err) {
    throw new LedgerEntryUnreadableError(path, unreadableWhy(err), { cause: err });
  }
}

/**
 * The newest whole record of an entry's file. An entry is written as one line of JSON, and the
 * process that wrote an order's intent appends the order's outcome as the next line
 * (FolderLedger.write), so an append cut short by a crash leaves a last line that is not whole
 * JSON: the whole line before it, the intent, is then the entry, and the order is in doubt as
 * if the outcome had never been written. An older version's entry is one pretty-printed document.
 * Text with no whole record throws, as JSON.parse does.
 */
export function parseEntry<T>(text: string): T {
  if (text.startsWith('{\n')) return JSON.parse(text) as T;
  const lines = text.split('\n');
  let failure: unknown;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i] === '') continue;
    try {
      const record: unknown = JSON.parse(lines[i] as string);
      if (record !== null && typeof record === 'object') return record as T;
    } catch (err) {
      failure ??= err;
    }
  }
  throw failure ?? new SyntaxError('Unexpected end of JSON input');
}

async function readTextOrNone(path: string, onThisThread: boolean): Promise<string | undefined> {
  if (!onThisThread) return unlessMissing(readFile(path, 'utf8'), undefined);
  // Most reads on the hot path find nothing (a new order's entry, a shard with no `.folded`): a
  // look that answers "none" without an error costs a small part of a failed open, whose error
  // captures a stack. A file removed between the look and the read is none all the same.
  if (statSync(path, { throwIfNoEntry: false }) === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
