import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** Who holds a claim or lock, and until when; written into claim and lock files/objects. */
export interface LeaseRecord {
  owner: string;
  host: string;
  pid: number;
  /** ISO time after which the holder is presumed dead. */
  until: string;
}

/**
 * Leases on claims and locks. A holder renews its lease while it works; a lease that ran out
 * belongs to a dead (or hopelessly stalled) instance and may be taken over. On the same host
 * we can do better than wait: a holder whose process no longer exists is dead now, which is
 * what lets a restarted instance resume its own crashed work at once.
 */

export const HOST = hostname();

/** A unique id for one claimant (instance × purpose): two watchers in one process differ. */
export function newOwnerId(): string {
  return `${HOST}:${process.pid}:${randomUUID()}`;
}

export function leaseRecord(owner: string, leaseMs: number, now = Date.now()): LeaseRecord {
  return { owner, host: HOST, pid: process.pid, until: new Date(now + leaseMs).toISOString() };
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
    // A torn or foreign file: treated as no lease at all (see isExpired).
  }
  return undefined;
}

/** True when the lease's holder is presumed dead: lease run out, or its process is gone from this host. */
export function isExpired(lease: LeaseRecord | undefined, now = Date.now()): boolean {
  if (!lease) return true;
  if (Date.parse(lease.until) <= now) return true;
  return lease.host === HOST && lease.pid !== process.pid && !processAlive(lease.pid);
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

/**
 * A new name prefix for a file or folder of this process (`<host>~<pid>~<random>`: a ledger
 * spare or lock token, a watcher's work folder), read back by nameOwner.
 */
export function ownedName(): string {
  return `${encodeURIComponent(HOST)}~${process.pid}~${randomBytes(4).toString('hex')}`;
}

/** The process that made a file or folder named by ownedName (from its name), to tell whether it is still alive. */
function nameOwner(name: string): { host: string; pid: number } | undefined {
  const [host, pid] = name.split('~');
  if (host === undefined || pid === undefined || !/^\d+$/.test(pid)) return undefined;
  try {
    return { host: decodeURIComponent(host), pid: Number(pid) };
  } catch {
    return undefined;
  }
}

/**
 * Whether what is named `name` (by ownedName) was left by a process of this host that is gone:
 * the same liveness rule as a lease's. A name of another host, or without an owner, is never
 * judged dead here.
 */
export function nameOwnerDead(name: string): boolean {
  const owner = nameOwner(name);
  return owner !== undefined && owner.host === HOST && owner.pid !== process.pid && !processAlive(owner.pid);
}
