import { type ExpiryRule, isExpired, type Lease, type LeaseStore, leaseText, newOwnerId, parseLease } from './lease.js';
import { PRECONDITION_FAILED, type PutCondition, type S3Store } from './s3/s3-store.js';

const JSON_TYPE = 'application/json';

/**
 * Leases in a bucket (lease.ts): the lease is one object holding its holder's record, created
 * with `If-None-Match: *` (exactly one creator wins), renewed and released with `If-Match: <our
 * ETag>` (so a holder that lost it finds out instead of clobbering the new holder), and taken
 * over once expired with `If-Match: <its ETag>`: of several instances that notice the same dead
 * holder, exactly one wins. Each lease has an owner of its own. A lease this instance holds is
 * never taken over by it, however late its renewal: only its holder learns whether it is still
 * ours (a renewal checked against its ETag), so taking it over would make its holder lose it to
 * itself.
 */
export class BucketLeases implements LeaseStore {
  /** The keys of the leases held here: neither released nor found another's. */
  private readonly held = new Set<string>();

  constructor(
    private readonly store: S3Store,
    readonly leaseMs: number,
    private readonly rule: ExpiryRule = {},
    /** The time (tests pass their own). */
    private readonly now: () => number = Date.now,
  ) {}

  async tryAcquire(key: string): Promise<Lease | undefined> {
    if (this.held.has(key)) return undefined;
    const owner = newOwnerId();
    const put = async (condition: PutCondition): Promise<Lease | undefined> => {
      const etag = await this.store.put(key, leaseText(owner, this.leaseMs, this.now()), condition, JSON_TYPE);
      return etag === PRECONDITION_FAILED ? undefined : this.hold(key, owner, etag);
    };
    const created = await put({ ifNoneMatch: '*' });
    if (created) return created;
    const current = await this.store.get(key);
    // Released between our create and our read: one more create, no loop.
    if (!current) return put({ ifNoneMatch: '*' });
    if (!isExpired(parseLease(current.body.toString('utf8')), this.now(), this.rule)) return undefined;
    return put({ ifMatch: current.etag });
  }

  private hold(key: string, owner: string, etag: string): Lease {
    const { store, leaseMs, now, held } = this;
    // Two creates of one key can both succeed only one after the other's release.
    held.add(key);
    let why: string | undefined;
    let renewedAt = now();
    let failure = '';
    const lose = (reason: string): false => {
      if (why === undefined) held.delete(key);
      why ??= reason;
      return false;
    };
    const renewOnce = async (): Promise<boolean> => {
      if (why) return false;
      try {
        if (!store.conditional) {
          // Without conditional writes, check the owner before rewriting (best effort).
          const cur = await store.get(key);
          if (parseLease(cur?.body.toString('utf8') ?? '')?.owner !== owner)
            return lose('another instance took it over');
        }
        const next = await store.put(key, leaseText(owner, leaseMs, now()), { ifMatch: etag }, JSON_TYPE);
        if (next === PRECONDITION_FAILED) return lose('another instance took it over');
        etag = next;
        renewedAt = now();
        return true;
      } catch (err) {
        failure = ` (${(err as Error).message})`;
        throw err;
      }
    };
    let sent: Promise<unknown> = Promise.resolve();
    let waiting: Promise<boolean> | undefined;
    return {
      lost() {
        // Nothing can be checked without a request: a lease not renewed within its time is lost.
        if (!why && now() - renewedAt > leaseMs) lose(`its lease ran out before it could be renewed${failure}`);
        return why === undefined ? undefined : new Error(why);
      },
      renew() {
        // One at a time: two renewals sent with the same ETag race, and the loser's 412 would
        // read as a takeover — its holder would lose the lease to itself. A caller arriving
        // while one waits shares it: it is sent after every renewal already under way.
        if (waiting) return waiting;
        const mine = sent.then(() => {
          if (waiting === mine) waiting = undefined;
          return renewOnce();
        });
        waiting = mine;
        sent = mine.catch(() => undefined);
        return mine;
      },
      async release() {
        if (why) return;
        lose('released');
        // After the renewals under way: deleted with the ETag the last of them left.
        await sent;
        await store.delete(key, etag);
      },
    };
  }
}

/**
 * Where watchers of earlier builds kept a bucket's ledger and claims: under the drop prefix,
 * where every dropper may write. Never read now; its presence is only told.
 */
export function droppersStateRoot(prefix: string): string {
  return `${prefix}.htorder/`;
}

/** The claims of the inputs of `s3://bucket/prefix`, under the watcher's state prefix (a name holds no `/`, so none collide). */
export function claimsRoot(statePrefix: string, bucket: string, prefix: string): string {
  return `${statePrefix}claims/${bucket}/${prefix}`;
}
