import { createHash } from 'node:crypto';
import { BoundedMemo } from '../../core/bounded-memo.js';

/**
 * A file or object name for an arbitrary string (order numbers may hold `/`, `..`, spaces,
 * unicode). Readable prefix for people browsing the folder, plus a hash so two different
 * strings never share a name and nothing can escape the ledger directory.
 */
export function safeName(value: string): string {
  const readable = value
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 60);
  return `${readable}-${hashOf(value).slice(0, 16)}`;
}

/**
 * The shard a string's file is kept in: the first `digits` hex digits of its SHA-256, so names
 * spread evenly over 16^digits folders whatever the order numbers look like.
 */
export function shardOf(value: string, digits: number): string {
  return hashOf(value).slice(0, digits);
}

/**
 * An entry's path names its account, its shard and its file by three hashes of two strings, and
 * a job's entry is looked up several times: each string is hashed once while it is in use.
 */
const hashes = new BoundedMemo<string, string>(4096);

function hashOf(value: string): string {
  return hashes.answer(value, () => createHash('sha256').update(value, 'utf8').digest('hex'));
}

/** A ledger note's name (LedgerStore.readNote): a plain name starting with a dot, never an entry's (safeName never starts with one). */
export function noteName(name: string): string {
  if (!/^\.[A-Za-z0-9._-]+$/.test(name)) throw new Error(`not a ledger note name: ${JSON.stringify(name)}`);
  return name;
}
