import { isExpired, leaseRecord, parseLease, type LeaseRecord } from '../lease.js';
import { PRECONDITION_FAILED, type S3Store } from './s3-store.js';

/**
 * A lease held as one object: created with `If-None-Match: *` (exactly one creator wins),
 * renewed and released with `If-Match: <our etag>` (so a holder that lost it — stalled past
 * its lease while another took over — finds out instead of clobbering the new holder).
 * An expired lease is taken over with `If-Match: <its etag>`: of several instances that
 * notice the same dead holder, exactly one wins. Used for watch's claims and the bucket
 * ledger's per-order locks.
 */
export class LeaseObject {
  private etag: string | undefined;

  constructor(
    private readonly store: S3Store,
    readonly key: string,
    private readonly owner: string,
    private readonly leaseMs: number,
  ) {}

  /** True when we now hold it; false when a live holder has it. */
  async tryAcquire(): Promise<boolean> {
    const body = this.body();
    const created = await this.store.put(this.key, body, { ifNoneMatch: '*' }, 'application/json');
    if (created !== PRECONDITION_FAILED) {
      this.etag = created;
      return true;
    }
    const current = await this.store.get(this.key);
    if (!current) return this.tryAcquireOnce();
    const lease = parseLease(current.body.toString('utf8'));
    if (!isExpired(lease)) return false;
    const taken = await this.store.put(this.key, body, { ifMatch: current.etag }, 'application/json');
    if (taken === PRECONDITION_FAILED) return false;
    this.etag = taken;
    return true;
  }

  /** The holder finished between our create and our read: one more create, no loop. */
  private async tryAcquireOnce(): Promise<boolean> {
    const created = await this.store.put(this.key, this.body(), { ifNoneMatch: '*' }, 'application/json');
    if (created === PRECONDITION_FAILED) return false;
    this.etag = created;
    return true;
  }

  /** False when the lease was lost. */
  async renew(): Promise<boolean> {
    if (this.etag === undefined) return false;
    if (!this.store.conditional) {
      // Without conditional writes, check the owner before rewriting (best effort).
      const cur = await this.store.get(this.key);
      if (parseLease(cur?.body.toString('utf8') ?? '')?.owner !== this.owner) {
        this.etag = undefined;
        return false;
      }
    }
    const etag = await this.store.put(this.key, this.body(), { ifMatch: this.etag }, 'application/json');
    if (etag === PRECONDITION_FAILED) {
      this.etag = undefined;
      return false;
    }
    this.etag = etag;
    return true;
  }

  async release(): Promise<void> {
    if (this.etag === undefined) return;
    const etag = this.etag;
    this.etag = undefined;
    await this.store.delete(this.key, etag);
  }

  get held(): boolean {
    return this.etag !== undefined;
  }

  private body(): string {
    const record: LeaseRecord = leaseRecord(this.owner, this.leaseMs);
    return `${JSON.stringify(record)}\n`;
  }
}
