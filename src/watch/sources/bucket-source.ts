import { createHash, randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { DONE_MARKER_SUFFIX, classifyName, markedInput, reportNames, timestampedName } from './drop-names.js';
import { type ReportPaths, reportPaths } from '../../report/report-paths.js';
import { BucketLeases } from '../../storage/bucket-lease.js';
import type { Lease, LeaseStore } from '../../storage/lease.js';
import {
  ClaimLostError,
  DEFAULT_LAYOUT,
  REPORT_KINDS,
  SourceError,
  assertLayout,
  type ClaimedInput,
  type DropLayout,
  type DropSource,
  type FinishOutcome,
  type InputChange,
  type ListedInput,
  type WriteReports,
} from './model.js';
import { describe, type ListedObject, PRECONDITION_FAILED, type S3Store } from '../../storage/s3/s3-store.js';
import { claimEach } from './orphans.js';
import { initialised, makeWorkFolder, type Slot, WorkSlots } from './work-folder.js';

export interface BucketSourceOptions {
  store: S3Store;
  /** Empty or ending in `/`. */
  prefix: string;
  /**
   * Where the claims live: a prefix droppers cannot write, outside the drop prefix, perhaps in
   * another bucket (its own store then), with the ledger beside them (`bucketLedger`); or the
   * ledger's database (`ledgerUrl`), whose leases are the claims (`ledger` names it for people).
   */
  state: BucketState | { leases: LeaseStore; ledger: string };
  layout?: DropLayout;
  /** A claim not renewed for this long belongs to a dead instance. Default 30 s. */
  leaseMs?: number;
  /**
   * Run even though the store does not honour conditional writes: claims and ledger locks
   * are then only safe while exactly one instance watches the prefix.
   */
  singleInstance?: boolean;
  onWarning?: (message: string) => void;
  /** Where the local copies of claimed objects are made (work-folder.ts); default the system's temporary folder. */
  workDir?: string;
}

/** A watcher's state prefix in a bucket: its claims, and the ledger beside them. */
export interface BucketState {
  store: S3Store;
  prefix: string;
}

/**
 * Where watchers of earlier builds kept a bucket's ledger and claims: under the drop prefix,
 * where every dropper may write. Never read now; its presence is only told.
 */
function droppersStateRoot(prefix: string): string {
  return `${prefix}.htorder/`;
}

/** The claims of the inputs of `s3://bucket/prefix`, under the watcher's state prefix (a name holds no `/`, so none collide). */
export function claimsRoot(statePrefix: string, bucket: string, prefix: string): string {
  return `${statePrefix}claims/${bucket}/${prefix}`;
}

/**
 * A bucket prefix as a drop location (`htorder watch s3://BUCKET/PREFIX`), with the folder's
 * layout as key prefixes. A claim is a bucket lease `STATE/claims/BUCKET/PREFIX/NAME.claim`
 * under the watcher's state prefix, which droppers cannot write (bucket-lease.ts: `If-None-Match:
 * *` create, so one instance wins; expired claims are taken over with `If-Match`); then the
 * input is copied to `processing/NAME` and removed from the top. The input is processed from a
 * local temporary copy and its reports are uploaded beside it in `done/` or `failed/`.
 */
export class BucketSource implements DropSource {
  readonly location: string;
  readonly needsStability = false;
  private readonly layout: Required<DropLayout>;
  private readonly claims: LeaseStore;
  /** The state prefix the claims are objects under; undefined when they are the ledger database's leases. */
  private readonly bucketState: BucketState | undefined;
  private work: string | undefined;
  /** Where objects' copies are made in the private folder: reused folders and files (work-folder.ts). */
  private readonly slots = new WorkSlots();

  constructor(private readonly opts: BucketSourceOptions) {
    this.location = `s3://${opts.store.bucket}/${opts.prefix}`;
    this.layout = { ...DEFAULT_LAYOUT, ...opts.layout };
    const { state } = opts;
    this.bucketState = 'store' in state ? state : undefined;
    this.claims = 'store' in state ? new BucketLeases(state.store, opts.leaseMs ?? 30_000) : state.leases;
  }

  private key(which: keyof DropLayout | 'top', name: string): string {
    return which === 'top' ? `${this.opts.prefix}${name}` : `${this.opts.prefix}${this.layout[which]}/${name}`;
  }

  private claimsRoot(state: BucketState): string {
    return claimsRoot(state.prefix, this.opts.store.bucket, this.opts.prefix);
  }

  private claimKey(name: string): string {
    const state = this.bucketState;
    return state
      ? `${this.claimsRoot(state)}${name}.claim`
      : JSON.stringify(['claim', `s3://${this.opts.store.bucket}/${this.opts.prefix}`, name]);
  }

  async init(): Promise<void> {
    assertLayout(this.layout, 'prefix');
    const { store, prefix } = this.opts;
    const state = this.bucketState;
    // Claims and ledger locks are made in the state's store (unless they are the database's);
    // the drop's own conditional writes keep a given-back input from replacing a newer upload.
    if (state)
      await this.probe(
        state.store,
        `${state.prefix}probe-${randomUUID()}`,
        `s3://${state.store.bucket}/${state.prefix}`,
      );
    if (store !== state?.store) await this.probe(store, `${prefix}.htorder-probe-${randomUUID()}`, this.location);
    await this.tellDroppersState();
    this.work = await makeWorkFolder(this.opts.workDir);
  }

  /** Whether `store` honours conditional writes; SourceError (usage) when not, unless --single-instance. */
  private async probe(store: S3Store, key: string, where: string): Promise<void> {
    let probe: Awaited<ReturnType<S3Store['probeConditionalWrites']>>;
    try {
      probe = await store.probeConditionalWrites(key);
    } catch (err) {
      throw new SourceError(`cannot use ${where}: ${describe(err)}`, 'unavailable');
    }
    if (probe.ok) return;
    const why = `${where} does not support conditional writes (${probe.why})`;
    if (!this.opts.singleInstance) {
      throw new SourceError(
        `${why}, so several watchers could process one file twice. Use a store with conditional writes (AWS S3, recent MinIO, R2), or run exactly one watcher with --single-instance`,
        'usage',
      );
    }
    store.conditional = false;
    this.opts.onWarning?.(`${why}; running as the only instance (--single-instance)`);
  }

  /** A ledger an earlier build kept under the drop prefix is not read (droppers could write it): said once, at start. */
  private async tellDroppersState(): Promise<void> {
    const old = droppersStateRoot(this.opts.prefix);
    if (!(await this.opts.store.hasAny(old))) return;
    this.opts.onWarning?.(
      `s3://${this.opts.store.bucket}/${old} (a ledger and claims kept under the drop prefix, where droppers may write) is no longer read: the ledger is ${this.ledgerName()}, and until it vouches for the account each new order is searched on the account before it is sent. Remove the old prefix once no watcher of an earlier build runs`,
    );
  }

  private ledgerName(): string {
    const { state } = this.opts;
    return 'store' in state ? `s3://${state.store.bucket}/${state.prefix}ledger/` : state.ledger;
  }

  async list(): Promise<ListedInput[]> {
    const objects = await this.opts.store.list(this.opts.prefix, '/');
    const names = objects.map((o) => ({ o, name: o.key.slice(this.opts.prefix.length) }));
    const markers = new Set(names.map((n) => markedInput(n.name)).filter((n): n is string => n !== undefined));
    return names
      .filter((n) => classifyName(n.name).take)
      .map((n) => ({ name: n.name, size: n.o.size, mtimeMs: n.o.lastModified, marked: markers.has(n.name) }));
  }

  async claim(name: string): Promise<ClaimedInput | undefined> {
    if (!classifyName(name).take) return undefined;
    const lease = await this.claims.tryAcquire(this.claimKey(name));
    return lease && this.adopt(name, lease);
  }

  async claimOrphans(): Promise<ClaimedInput[]> {
    const prefix = this.key('processing', '');
    const names = new Set<string>();
    for (const o of await this.opts.store.list(prefix, '/')) {
      const name = o.key.slice(prefix.length);
      if (classifyName(name).take) names.add(name);
    }
    // A claim whose input is gone from processing/ (a finish cut short after its delete) is
    // taken and given back by take(), which finds nothing to process. (The database's leases
    // of such claims simply run out.)
    const state = this.bucketState;
    if (state) {
      const claims = this.claimsRoot(state);
      for (const o of await state.store.list(claims, '/')) {
        const claimOf = /^(.+)\.claim$/.exec(o.key.slice(claims.length))?.[1];
        if (claimOf !== undefined && classifyName(claimOf).take) names.add(claimOf);
      }
    }
    // A live instance holds it (this one included): no claim; else adopted.
    const claimOne = async (name: string): Promise<ClaimedInput | undefined> => {
      const lease = await this.claims.tryAcquire(this.claimKey(name));
      return lease && this.adopt(name, lease);
    };
    return claimEach(names, claimOne, { renewEveryMs: this.claims.leaseMs / 3 });
  }

  /**
   * With the claim held: make sure the input is in processing/ (copy it there and remove it
   * from the top, unless a crashed holder already did) and fetch a local copy. The claim is
   * given back when that fails: the input is then where an orphan search finds it.
   */
  private async adopt(name: string, lease: Lease): Promise<ClaimedInput | undefined> {
    try {
      return await this.take(name, lease);
    } catch (err) {
      await lease.release().catch(() => undefined);
      throw err;
    }
  }

  private async take(name: string, lease: Lease): Promise<ClaimedInput | undefined> {
    const store = this.opts.store;
    const processingKey = this.key('processing', name);
    let input = await store.get(processingKey);
    if (!input && (await store.copy(this.key('top', name), processingKey))) input = await store.get(processingKey);
    if (!input) {
      // Another instance finished it between our listing and our claim.
      await lease.release();
      return undefined;
    }
    // A crash between copy and delete leaves the same object at the top: remove it (same
    // ETag) so it is not taken a second time. A different one is a new drop and stays.
    const top = await this.head(this.key('top', name));
    let topEtag = top?.etag;
    if (top && top.etag === input.etag && (await store.delete(top.key, top.etag))) topEtag = undefined;
    await store.delete(this.key('top', `${name}${DONE_MARKER_SUFFIX}`));
    const slot = await this.slots.take(initialised(this.work));
    let path: string;
    try {
      const out = await slot.open();
      try {
        await out.writeFile(input.body);
      } finally {
        await out.close();
      }
      path = await slot.place(name);
    } catch (err) {
      await slot.drop();
      throw err;
    }
    const sha256 = createHash('sha256').update(input.body).digest('hex');
    return this.claimed(name, slot, path, sha256, lease, { etag: input.etag, topEtag });
  }

  /** The object at exactly `key` (a listing by prefix also shows longer keys), or undefined. */
  private async head(key: string): Promise<ListedObject | undefined> {
    return (await this.opts.store.list(key)).find((o) => o.key === key);
  }

  /**
   * What changed since the claim read the object (`etag`) and left the top key as `topEtag`
   * (undefined: nothing there). Uploads are atomic, so no object is ever half-written; a
   * change is a newer upload under the same key. Before the first submit, a newer upload
   * replaces this one: nothing is submitted from it, and the newer one is processed in full
   * (had the watcher been slower, the store itself would have replaced it). Once jobs were
   * submitted, it is a new input like any other drop and this one finishes as usual.
   */
  private async changeOf(
    name: string,
    claim: { etag: string; topEtag: string | undefined },
    when: 'submit' | 'finish',
  ): Promise<InputChange | undefined> {
    const now = await this.head(this.key('processing', name));
    if (!now) return { what: 'it is gone from processing/', next: 'nothing is left to process' };
    if (now.etag !== claim.etag) return { what: 'it was replaced in processing/', next: 'will be processed again' };
    if (when === 'finish') return undefined;
    const top = await this.head(this.key('top', name));
    if (top && top.etag !== claim.topEtag)
      return { what: `a newer upload of ${name} arrived`, next: 'the newer upload will be processed in full instead' };
    return undefined;
  }

  private claimed(
    name: string,
    slot: Slot,
    path: string,
    sha256: string,
    lease: Lease,
    claim: { etag: string; topEtag: string | undefined },
  ): ClaimedInput {
    const store = this.opts.store;
    // Nothing irreversible without the claim: if it was taken over, the taker finishes (as for a
    // folder, ClaimLostError: the caller reports the input lost, not unavailable).
    const holdClaim = async (): Promise<void> => {
      if (!(await lease.renew())) throw new ClaimLostError(`lost the claim on ${name}: another instance took it over`);
    };
    // The copy and this attempt's local reports go with the claim (slot.drop); the slot is then free for another input.
    const dropCopy = (): Promise<void> => slot.drop();
    return {
      name,
      path,
      sha256,
      location: `s3://${store.bucket}/${this.key('processing', name)}`,
      renew: () => lease.renew(),
      finish: async (outcome: FinishOutcome, writeReports?: WriteReports) => {
        await holdClaim();
        const { name: finalName, resumed } = await this.freeName(outcome, name, claim.etag);
        const finalKey = this.key(outcome, finalName);
        // Written once, beside the private copy, then uploaded beside the input's final key.
        const local = reportPaths(path);
        const wrote = (await writeReports?.({ paths: local, inputShownAs: `s3://${store.bucket}/${finalKey}` })) ?? {};
        const finals = reportPaths(finalKey);
        for (const kind of REPORT_KINDS) {
          if (wrote[kind] !== undefined)
            await store.put(finals[kind], await readFile(local[kind]), undefined, CONTENT_TYPES[kind]);
          // A report the cut-short finish uploaded and this one did not write (errors.txt) goes.
          else if (resumed) await store.delete(finals[kind]);
        }
        await store.copy(this.key('processing', name), finalKey);
        await store.delete(this.key('processing', name));
        await lease.release();
        await dropCopy();
        return `s3://${store.bucket}/${finalKey}`;
      },
      release: async () => {
        await lease.release();
        await dropCopy();
      },
      forget: dropCopy,
      recheck: (when) => this.changeOf(name, claim, when),
      requeue: async () => {
        await holdClaim();
        const topKey = this.key('top', name);
        const top = await this.head(topKey);
        // Replaced by a newer upload: this one goes (only if it is still the object read at
        // claim), and the newer one is claimed afresh. Otherwise (replaced or gone in
        // processing/) it stays there and is resumed like an input of a crashed instance.
        const superseded = top !== undefined && top.etag !== claim.topEtag;
        if (superseded) await store.delete(this.key('processing', name), claim.etag);
        await lease.release();
        await dropCopy();
        return `s3://${store.bucket}/${superseded ? topKey : this.key('processing', name)}`;
      },
    };
  }

  /**
   * The name the input takes in done/ or failed/: its own, or a timestamped one when an older
   * input of the same name is there. Its own also when what is there is this input's own
   * finish, cut short by a crash (reports uploaded, maybe the input copied, processing/ not yet
   * deleted) and now resumed: every such object is no older than the input's claim (its
   * processing/ copy, by the store's clock) and an input copied there is this one (same ETag).
   * Unlike a folder's renames, the uploads of a finish are seconds apart, so this gap is real.
   */
  private async freeName(
    outcome: FinishOutcome,
    name: string,
    etag: string,
  ): Promise<{ name: string; resumed: boolean }> {
    const now = new Date();
    for (let attempt = 0; ; attempt++) {
      const candidate = attempt === 0 ? name : timestampedName(name, now, attempt - 1);
      const wanted = new Set([candidate, ...reportNames(candidate)].map((n) => this.key(outcome, n)));
      const there = (await this.opts.store.list(this.key(outcome, candidate))).filter((o) => wanted.has(o.key));
      if (there.length === 0) return { name: candidate, resumed: false };
      if (attempt === 0 && (await this.ownCutFinish(there, this.key(outcome, candidate), name, etag)))
        return { name: candidate, resumed: true };
    }
  }

  /** Whether `there` (objects at an input's final keys) are this claimed input's own interrupted finish. */
  private async ownCutFinish(there: ListedObject[], inputKey: string, name: string, etag: string): Promise<boolean> {
    const claimed = await this.head(this.key('processing', name));
    if (!claimed || claimed.etag !== etag) return false;
    return there.every((o) => o.lastModified >= claimed.lastModified && (o.key !== inputKey || o.etag === etag));
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

  async takeBack(name: string): Promise<string | undefined> {
    if (!classifyName(name).take) return undefined;
    const store = this.opts.store;
    const heldKey = this.key('held', name);
    const obj = await store.get(heldKey);
    if (!obj) return undefined;
    // Created only where no object is (a newer upload of the same name keeps its key).
    const now = new Date();
    for (let attempt = 0; ; attempt++) {
      const topKey = this.key('top', attempt === 0 ? name : timestampedName(name, now, attempt - 1));
      if ((await store.put(topKey, obj.body, { ifNoneMatch: '*' })) === PRECONDITION_FAILED) continue;
      await Promise.all([heldKey, ...reportNames(heldKey)].map((k) => store.delete(k)));
      return `s3://${store.bucket}/${topKey}`;
    }
  }

  async close(): Promise<void> {
    if (this.work) await rm(this.work, { recursive: true, force: true });
    this.opts.store.close();
    const state = this.bucketState;
    if (state && state.store !== this.opts.store) state.store.close();
  }
}

const CONTENT_TYPES: Record<keyof ReportPaths, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  errors: 'text/plain; charset=utf-8',
};
