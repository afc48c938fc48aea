import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type ReportPaths, reportPaths } from '../../report/report-paths.js';
import { BucketLeases, claimsRoot, droppersStateRoot } from '../../storage/bucket-lease.js';
import { claimKey, dropKey, KeyLengthCheck } from '../bucket-keys.js';
import { describe, PRECONDITION_FAILED, type S3Store } from '../../storage/s3/s3-store.js';
import { Drop, type DropOptions, type NewSlot, type Occupant, type Staged, type Taken, type Where } from './drop.js';
import { DONE_MARKER_SUFFIX, classifyName, markedInput, reportNames } from './drop-names.js';
import { LEDGER_MARK } from '../../storage/ledger/ledger-mark.js';
import { REPORT_KINDS, SourceError, type FinishOutcome, type InputChange, type ListedInput } from './model.js';

export interface BucketSourceOptions extends DropOptions {
  store: S3Store;
  /** Empty or ending in `/`. */
  prefix: string;
  /**
   * Where the claims live (and the ledger beside them, `bucketLedger`): a prefix droppers cannot
   * write, outside the drop prefix, perhaps in another bucket (its own store then). Absent
   * when `leases` (a ledger database's, ledgerUrl) holds the claims and the ledger is there.
   */
  state?: { store: S3Store; prefix: string };
  /** A claim not renewed for this long belongs to a dead instance. Default 30 s. */
  leaseMs?: number;
  /**
   * Run even though the store does not honour conditional writes: claims and ledger locks
   * are then only safe while exactly one instance watches the prefix.
   */
  singleInstance?: boolean;
  onWarning?: (message: string) => void;
}

/** What a bucket keeps of a claim: the ETag of what was read, and of what was left at the top (undefined: nothing). */
interface BucketClaim {
  etag: string;
  topEtag: string | undefined;
}

/** An object to give back to the top. */
interface Entry {
  key: string;
  body: Buffer;
}

/**
 * A bucket prefix (`htorder watch s3://BUCKET/PREFIX`) as a store of the drop protocol
 * (drop.ts), the folder's layout as key prefixes. A claim is a bucket lease
 * `STATE/claims/BUCKET/PREFIX/NAME.claim` under the watcher's state prefix, which droppers
 * cannot write (bucket-lease.ts); then the input is copied to `processing/NAME` and removed from
 * the top. Uploads are atomic and conditional writes keep a given-back input from replacing a
 * newer upload; reports are written beside the local copy and uploaded.
 */
export class BucketSource extends Drop<BucketClaim, Entry> {
  readonly location: string;
  readonly needsStability = false;
  private readonly keyLengths: KeyLengthCheck;

  constructor(private readonly opts: BucketSourceOptions) {
    const own = opts.state ? new BucketLeases(opts.state.store, opts.leaseMs ?? 30_000) : opts.leases;
    if (!own) throw new Error('a bucket source needs a state prefix or the leases of a ledger database');
    super(own, opts);
    this.location = `s3://${opts.store.bucket}/${opts.prefix}`;
    this.keyLengths = new KeyLengthCheck(opts.prefix, this.layout, opts.state && this.claimsRoot(), opts.onRefused);
  }

  private key(which: Where, name: string): string {
    return dropKey(this.opts.prefix, this.layout, which, name);
  }

  protected where(which: Where, name: string): string {
    return `s3://${this.opts.store.bucket}/${this.key(which, name)}`;
  }

  private claimsRoot(): string {
    return claimsRoot(this.opts.state?.prefix ?? '', this.opts.store.bucket, this.opts.prefix);
  }

  protected claimName(name: string): string {
    return claimKey(this.claimsRoot(), name);
  }

  protected async open(): Promise<void> {
    const { store, state, prefix } = this.opts;
    // Claims and ledger locks are made in the state's store; the drop's own conditional writes
    // keep a given-back input from replacing a newer upload.
    // One probe a store; the stale probes of the drop prefix go with the state's when one store has both.
    // Earlier builds named their state prefix's probes `probe-UUID`: those go too.
    const oneStore = store === state?.store;
    if (state)
      await this.probe(
        state.store,
        state.prefix,
        `s3://${state.store.bucket}/${state.prefix}`,
        oneStore ? [prefix] : [],
        [state.prefix],
      );
    if (!oneStore) await this.probe(store, prefix, this.location);
    const ledger = state ? `s3://${state.store.bucket}/${state.prefix}ledger/` : 'the ledger database (ledgerUrl)';
    const old = droppersStateRoot(prefix);
    const leftOver = await store.hasAny(old).catch((err: unknown) => {
      throw new SourceError(`cannot use ${this.location}: ${describe(err)}`, 'unavailable');
    });
    if (leftOver)
      this.opts.onWarning?.(
        `s3://${store.bucket}/${old} (a ledger and claims kept under the drop prefix, where droppers may write) is no longer read: the ledger is ${ledger}, and until it vouches for the account each new order is searched on the account before it is sent. Remove the old prefix once no watcher of an earlier build runs`,
      );
  }

  /** Whether `store` honours conditional writes (a probe under `under`); SourceError (usage) when not, unless --single-instance. */
  private async probe(
    store: S3Store,
    under: string,
    where: string,
    alsoUnder: string[] = [],
    oldUnder: string[] = [],
  ): Promise<void> {
    let probe: Awaited<ReturnType<S3Store['probeConditionalWrites']>>;
    try {
      probe = await store.probeConditionalWrites(under, alsoUnder, oldUnder);
    } catch (err) {
      throw new SourceError(`cannot use ${where}: ${describe(err)}`, 'unavailable');
    }
    if (probe.ok) return;
    const why = `${where} does not support conditional writes (${probe.why})`;
    if (!this.opts.singleInstance)
      throw new SourceError(
        `${why}, so several watchers could process one file twice. Use a store with conditional writes (AWS S3, recent MinIO, R2), or run exactly one watcher with --single-instance`,
        'usage',
      );
    store.conditional = false;
    this.opts.onWarning?.(`${why}; running as the only instance (--single-instance)`);
  }

  async list(): Promise<ListedInput[]> {
    const names = (await this.opts.store.list(this.opts.prefix, '/')).map((o) => ({
      o,
      name: o.key.slice(this.opts.prefix.length),
    }));
    const markers = new Set(names.map((n) => markedInput(n.name)));
    return names
      .filter((n) => classifyName(n.name).take && this.keyLengths.fits(n.name))
      .map((n) => ({ name: n.name, size: n.o.size, mtimeMs: n.o.lastModified, marked: markers.has(n.name) }));
  }

  /**
   * The inputs in processing/, and the claims there (a claim whose input is gone from
   * processing/, a finish cut short after its delete, is taken and given back: nothing to take).
   */
  protected async orphanNames(): Promise<string[]> {
    const processing = this.key('processing', '');
    const claims = this.claimsRoot();
    const inputs = (await this.opts.store.list(processing, '/')).map((o) => o.key.slice(processing.length));
    // Claims kept elsewhere (a ledger database's leases) run out by themselves.
    const claimed = (this.opts.state ? await this.opts.state.store.list(claims, '/') : []).map(
      (o) => /^(.+)\.claim$/.exec(o.key.slice(claims.length))?.[1],
    );
    return [...inputs, ...claimed].filter((n): n is string => n !== undefined);
  }

  protected async take(name: string, newSlot: NewSlot, fromTop: boolean): Promise<Taken<BucketClaim> | undefined> {
    const store = this.opts.store;
    const processingKey = this.key('processing', name);
    const max = this.maxInputBytes;
    let input = await store.get(processingKey, max);
    // The top object's own ETag, kept: its copy's differs after a multipart or SSE-KMS upload.
    const copied = !input && fromTop ? await store.copyCurrent(this.key('top', name), processingKey) : undefined;
    if (copied !== undefined) input = await store.get(processingKey, max);
    // Another instance finished it between our listing and our claim.
    if (!input) return undefined;
    // The object copied, or one a crash left between copy and delete (same ETag), is removed
    // from the top so it is not taken a second time. A different one is a new drop and stays.
    const top = await this.opts.store.head(this.key('top', name));
    let topEtag = top?.etag;
    const same = top !== undefined && (top.etag === input.etag || top.etag === copied);
    if (same && (await store.delete(top.key, top.etag))) topEtag = undefined;
    await store.delete(this.key('top', `${name}${DONE_MARKER_SUFFIX}`));
    const slot = await newSlot();
    if (input.tooBig !== undefined)
      return {
        facts: { etag: input.etag, topEtag },
        refused: `it is ${input.tooBig} bytes, over the ${max}-byte limit for a dropped file (setting watchMaxInputBytes)`,
      };
    const out = await slot.open();
    try {
      await out.writeFile(input.body);
    } finally {
      await out.close();
    }
    await slot.place(name);
    return { facts: { etag: input.etag, topEtag }, sha256: createHash('sha256').update(input.body).digest('hex') };
  }

  /**
   * What changed since the claim read the object: uploads are atomic, so a change is a newer
   * upload under the same key. Before the first submit, a newer upload at the top replaces this
   * one: nothing is submitted from it, and the newer one is processed in full (had the watcher
   * been slower, the store itself would have replaced it). Once jobs were submitted, it is a new
   * input like any other drop and this one finishes as usual.
   */
  protected async recheck(
    name: string,
    claim: BucketClaim,
    when: 'submit' | 'finish',
  ): Promise<InputChange | undefined> {
    const now = await this.opts.store.head(this.key('processing', name));
    if (!now) return { what: 'it is gone from processing/', next: 'nothing is left to process' };
    if (now.etag !== claim.etag) return { what: 'it was replaced in processing/', next: 'will be processed again' };
    if (when === 'finish') return undefined;
    const top = await this.opts.store.head(this.key('top', name));
    if (top && top.etag !== claim.topEtag)
      return { what: `a newer upload of ${name} arrived`, next: 'the newer upload will be processed in full instead' };
    return undefined;
  }

  /** Its processing/ copy's time, by the store's clock, while it is this claim's. */
  protected async claimedAt(name: string, { etag }: BucketClaim): Promise<number | undefined> {
    const claimed = await this.opts.store.head(this.key('processing', name));
    return claimed?.etag === etag ? claimed.lastModified : undefined;
  }

  /** One listing: the uploads of a finish are seconds apart, so a finish cut short among them is a real case. */
  protected async occupants(outcome: FinishOutcome, name: string, claim?: BucketClaim): Promise<Occupant[]> {
    const inputKey = this.key(outcome, name);
    const wanted = new Set([name, ...reportNames(name)].map((n) => this.key(outcome, n)));
    const there = (await this.opts.store.list(inputKey)).filter((o) => wanted.has(o.key));
    return there.map((o) => ({
      input: o.key === inputKey,
      regular: true,
      mtimeMs: o.lastModified,
      claimed: o.etag === claim?.etag,
    }));
  }

  protected async namesIn(outcome: FinishOutcome, start: string, since: number): Promise<string[]> {
    const under = this.key(outcome, '');
    const listed = await this.opts.store.list(`${under}${start}`, '/');
    return listed.filter((o) => o.lastModified >= since).map((o) => o.key.slice(under.length));
  }

  /** Written once, beside the private copy, then uploaded beside the input's final key. */
  protected async stage(_outcome: FinishOutcome, _final: string, _claim: BucketClaim, copy: string): Promise<Staged> {
    return { paths: reportPaths(copy) };
  }

  protected async place(outcome: FinishOutcome, final: string, kind: keyof ReportPaths, from: string): Promise<void> {
    const key = reportPaths(this.key(outcome, final))[kind];
    await this.opts.store.put(key, await readFile(from), undefined, CONTENT_TYPES[kind]);
  }

  protected async removeReports(where: FinishOutcome, name: string, kinds = REPORT_KINDS): Promise<void> {
    const keys = reportPaths(this.key(where, name));
    await Promise.all(kinds.map((kind) => this.opts.store.delete(keys[kind])));
  }

  protected async moveIn(outcome: FinishOutcome, name: string, final: string): Promise<undefined> {
    await this.opts.store.copy(this.key('processing', name), this.key(outcome, final));
    await this.opts.store.delete(this.key('processing', name));
    return undefined;
  }

  /**
   * Replaced by a newer upload: this one goes (only if it is still the object read at claim),
   * and the newer one is claimed afresh. Otherwise (replaced or gone in processing/) it stays
   * there and is resumed like an input of a crashed instance.
   */
  protected async requeueIn(name: string, claim: BucketClaim): Promise<string> {
    const top = await this.opts.store.head(this.key('top', name));
    const superseded = top !== undefined && top.etag !== claim.topEtag;
    if (superseded) await this.opts.store.delete(this.key('processing', name), claim.etag);
    return this.where(superseded ? 'top' : 'processing', name);
  }

  protected async toGiveBack(where: FinishOutcome, name: string): Promise<Entry | undefined> {
    const key = this.key(where, name);
    const obj = await this.opts.store.get(key);
    return obj && { key, body: obj.body };
  }

  /** Created only where no object is (a newer upload of the same name keeps its key), then removed where it was. */
  protected async putAtTop({ key, body }: Entry, candidate: string): Promise<string | 'taken'> {
    const at = this.key('top', candidate);
    if ((await this.opts.store.put(at, body, { ifNoneMatch: '*' })) === PRECONDITION_FAILED) {
      // A write that succeeded but whose answer was lost is retried into 412 by the SDK: the
      // same bytes there are this entry already, not another to give back beside.
      const there = await this.opts.store.get(at, body.length);
      if (!there || there.tooBig !== undefined || !there.body.equals(body)) return 'taken';
    }
    await this.opts.store.delete(key);
    return this.where('top', candidate);
  }

  async listHeld(): Promise<string[]> {
    const prefix = this.key('held', '');
    const objects = await this.opts.store.list(prefix, '/');
    return objects.map((o) => o.key.slice(prefix.length)).filter((name) => classifyName(name).take);
  }

  async heldHash(name: string): Promise<string | undefined> {
    if (!classifyName(name).take) return undefined;
    const obj = await this.opts.store.get(this.key('held', name));
    return obj && createHash('sha256').update(obj.body).digest('hex');
  }

  /** A dropper may write the prefix: a mark too big to be one is not read. */
  protected async readMark(): Promise<string | undefined> {
    const key = this.key('top', LEDGER_MARK);
    const seen = await this.opts.store.head(key);
    if (!seen) return undefined;
    if (seen.size > 4096) return '';
    return (await this.opts.store.get(key))?.body.toString('utf8');
  }

  protected async writeMark(text: string, replace: boolean): Promise<boolean> {
    const condition = replace ? undefined : ({ ifNoneMatch: '*' } as const);
    const put = await this.opts.store.put(this.key('top', LEDGER_MARK), text, condition, 'application/json');
    return put !== PRECONDITION_FAILED;
  }

  protected async closeStore(): Promise<void> {
    this.opts.store.close();
    if (this.opts.state && this.opts.state.store !== this.opts.store) this.opts.state.store.close();
  }
}

const CONTENT_TYPES: Record<keyof ReportPaths, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  errors: 'text/plain; charset=utf-8',
};
