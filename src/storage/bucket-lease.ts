import { type ExpiryRule, isExpired, type Lease, type LeaseStore, leaseText, newOwnerId, parseLease } from './lease.js';
import { PRECONDITION_FAILED, type PutCondition, type S3Store } from './s3/s3-store.js';

const JSON_TYPE = 'application/json';

/**
 * Leases in a bucket (lease.ts): the lease is one object holding its holder's record, created
 * with `If-None-Match: *` (exactly one creator wins), renewed and released with `If-Match: <our
 * ETag>` (so a holder that lost it finds out instead of clobbering the new holder), and taken
 * over once expired with `If-Match: <its ETag>`: of several instances that notice the same dead
 * holder, exactly one wins. Each lease has an owner of its own.
 */
export class BucketLeases implements LeaseStore {
  constructor(
    private readonly store: S3Store,
    readonly leaseMs: number,
    private readonly rule: ExpiryRule = {},
  ) {}

  async tryAcquire(key: string): Promise<Lease | undefined> {
    const owner = newOwnerId();
    const put = async (condition: PutCondition): Promise<Lease | undefined> => {
      const etag = await this.store.put(key, leaseText(owner, this.leaseMs), condition, JSON_TYPE);
      return etag === PRECONDITION_FAILED ? undefined : this.hold(key, owner, etag);
    };
    const created = await put({ ifNoneMatch: '*' });
    if (created) return created;
    const current = await this.store.get(key);
    // Released between our create and our read: one more create, no loop.
    if (!current) return put({ ifNoneMatch: '*' });
    if (!isExpired(parseLease(current.body.toString('utf8')), Date.now(), this.rule)) return undefined;
    return put({ ifMatch: current.etag });
  }

  private hold(key: string, owner: string, etag: string): Lease {
    const { store, leaseMs } = this;
    let why: string | undefined;
    let renewedAt = Date.now();
    let failure = '';
    const lose = (reason: string): false => {
      why ??= reason;
      return false;
    };
    return {
      lost() {
        // Nothing can be checked without a request: a lease not renewed within its time is lost.
        if (!why && Date.now() - renewedAt > leaseMs) lose(`its lease ran out before it could be renewed${failure}`);
        return why === undefined ? undefined : new Error(why);
      },
      async renew() {
        if (why) return false;
        try {
          if (!store.conditional) {
            // Without conditional writes, check the owner before rewriting (best effort).
            const cur = await store.get(key);
            if (parseLease(cur?.body.toString('utf8') ?? '')?.owner !== owner)
              return lose('another instance took it over');
          }
          const next = await store.put(key, leaseText(owner, leaseMs), { ifMatch: etag }, JSON_TYPE);
          if (next === PRECONDITION_FAILED) return lose('another instance took it over');
          etag = next;
          renewedAt = Date.now();
          return true;
        } catch (err) {
          failure = ` (${(err as Error).message})`;
          throw err;
        }
      },
      async release() {
        if (why) return;
        why = 'released';
        await store.delete(key, etag);
      },
    };
  }
}
