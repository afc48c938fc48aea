import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Backoff, backoffDelay } from '../core/backoff.js';

/**
 * The one lease protocol of htorder (docs/architecture.md#exactly-once): every lock and claim
 * is a lease — a name in a folder (folder-lease.ts), a bucket (bucket-lease.ts) or a database
 * (pg/pg-lease.ts) — made atomically, renewed by its holder, judged expired by one rule
 * (isExpired), taken over atomically, and checked by its holder right before anything
 * irreversible is done under it.
 */

/** Who holds a lease, and until when: the text of every lease (one line of JSON). */
export interface LeaseRecord {
  owner: string;
  host: string;
  pid: number;
  /** ISO time after which the holder is presumed dead. */
  until: string;
}

export interface Lease {
  /**
   * Why the lease is no longer ours, as far as can be told now without waiting (a folder: its
   * name leads elsewhere or is gone; a bucket: a renewal was refused, or none succeeded within a
   * lease); undefined while held. Once lost, always lost.
   */
  lost(): Error | undefined;
  /** Renews it, checked where it lives (inode, ETag): false when it is no longer ours. */
  renew(): Promise<boolean>;
  /** Gives it up; one that is no longer ours is left to its new holder. */
  release(): Promise<void>;
}

/** Where leases live; `L` is what its leases tell besides the protocol (a database lease: its row). */
export interface LeaseStore<L extends Lease = Lease> {
  /** How long a lease lasts unrenewed. */
  readonly leaseMs: number;
  /** Takes `name` when it is free or expired (taken over atomically); undefined while another holds it. */
  tryAcquire(name: string): Promise<L | undefined>;
}

export class LeaseBusyError extends Error {
  override name = 'LeaseBusyError';
}

export const HOST = hostname();

/** A unique id for one claimant (instance × purpose): two watchers in one process differ. */
export function newOwnerId(): string {
  return `${HOST}:${process.pid}:${randomUUID()}`;
}

/** The record of a lease held by `owner` from `now`, as stored (one line of JSON). */
export function leaseText(owner: string, leaseMs: number, now = Date.now()): string {
  const record: LeaseRecord = { owner, host: HOST, pid: process.pid, until: new Date(now + leaseMs).toISOString() };
  return `${JSON.stringify(record)}\n`;
}

export function parseLease(text: string): LeaseRecord | undefined {
  try {
    const v = JSON.parse(text) as Partial<LeaseRecord>;
    if (
      typeof v.owner === 'string' &&
      typeof v.host === 'string' &&
      typeof v.pid === 'number' &&
      typeof v.until === 'string'
    ) {
      return v as LeaseRecord;
    }
  } catch {
    // A torn or foreign file: no record (see isExpired).
  }
  return undefined;
}

/** What a store knows beyond a lease's record. */
export interface ExpiryRule {
  /** The lease's mtime, for a lease without a record, judged stale once untouched for `staleMs`. */
  age?: { mtimeMs: number; staleMs: number };
  /**
   * The lease outlives its holder's process until it runs out, because what it guards does too:
   * a request on the wire may still reach the API after its sender died (the ledger's locks).
   */
  survivesHolder?: boolean;
}

/**
 * The one rule a lease is judged by: its holder is presumed dead when its lease ran out (or its
 * `until` is no time at all), or — unless it survives its holder — its process is gone from
 * this host, which lets a restarted process resume its own crashed work at once. A lease
 * without a record (an older htorder's lock, which only keeps its mtime fresh; one cut short
 * before its record was written) is judged by its age where that is known.
 */
export function isExpired(lease: LeaseRecord | undefined, now = Date.now(), rule: ExpiryRule = {}): boolean {
  if (!lease) return rule.age === undefined || now - rule.age.mtimeMs > rule.age.staleMs;
  if (!(Date.parse(lease.until) > now)) return true;
  return !rule.survivesHolder && lease.host === HOST && lease.pid !== process.pid && !processAlive(lease.pid);
}

/** Whether a process of this host with `pid` exists (ours or another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it just is not ours.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How long to wait for a lease another holds, and how often to look again. */
export interface LeaseWait {
  waitMs: number;
  backoff: Backoff;
}

/** Takes `name`, waiting with the one backoff while a live holder has it; LeaseBusyError after `waitMs`. */
export async function acquireLease<L extends Lease>(store: LeaseStore<L>, name: string, wait: LeaseWait): Promise<L> {
  const deadline = Date.now() + wait.waitMs;
  for (let attempt = 1; ; attempt++) {
    const lease = await store.tryAcquire(name);
    if (lease) return lease;
    const left = deadline - Date.now();
    if (left <= 0) throw new LeaseBusyError(`${name} is held by a live process`);
    await sleep(Math.min(left, backoffDelay(attempt, wait.backoff)));
  }
}

/** Runs `fn` holding `lease`, renewed every quarter lease, and releases it after. */
export async function holdLease<T>(store: LeaseStore, lease: Lease, fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(
    () => {
      // A failed renewal is not yet a loss: lost() tells once it is.
      lease.renew().catch(() => undefined);
    },
    Math.max(100, store.leaseMs / 4),
  );
  timer.unref();
  try {
    return await fn();
  } finally {
    clearInterval(timer);
    await lease.release().catch(() => undefined);
  }
}

/**
 * A new name prefix for a file or folder of this process (`<host>~<pid>~<random>`: a ledger
 * spare, a watcher's work folder), read back by nameOwnerDead.
 */
export function ownedName(): string {
  return `${encodeURIComponent(HOST)}~${process.pid}~${randomBytes(4).toString('hex')}`;
}

/**
 * Whether what is named `name` (by ownedName) was left by a process of this host that is gone:
 * the liveness rule of a lease. A name of another host, or without an owner, is never judged
 * dead here.
 */
export function nameOwnerDead(name: string): boolean {
  const [host, pid] = name.split('~');
  if (host === undefined || pid === undefined || !/^\d+$/.test(pid)) return false;
  let owner: string;
  try {
    owner = decodeURIComponent(host);
  } catch {
    return false;
  }
  return owner === HOST && Number(pid) !== process.pid && !processAlive(Number(pid));
}
