import { rm } from 'node:fs/promises';
import { type Clock, nowDate, systemClock } from '../../core/clock.js';
import type { Logger } from '../../core/log/logger.js';
import type { ReportPaths } from '../../report/report-paths.js';
import type { ReportTarget } from '../../report/write-reports.js';
import type { FolderPin } from '../../storage/folder-file.js';
import { type LedgerMark, markFor } from '../../storage/ledger/ledger-mark.js';
import type { Lease, LeaseStore } from '../../storage/lease.js';
import { classifyName, stampedNamesOf, stampedStart, timestampedName } from './drop-names.js';
import {
  ClaimLostError,
  DEFAULT_LAYOUT,
  DropTakenError,
  SourceError,
  REPORT_KINDS,
  assertLayout,
  type ClaimedInput,
  type DropLayout,
  type DropSource,
  type Finished,
  type FinishOutcome,
  type InputChange,
  type ListedInput,
  type WriteReports,
} from './model.js';
import { claimEach } from './orphans.js';
import { initialised, makeWorkFolder, type Slot, WorkSlots } from '../work-folder.js';

/** What a store made of a claimed input: its private copy is in the slot, under the input's name. */
export interface Taken<C> {
  /** What the store compares later: the identity and fingerprint of what was copied, or ETags. */
  facts: C;
  sha256?: string;
  refused?: string;
  artworkFolder?: FolderPin;
}

/** An entry found at an input's final name, or one of its reports', in done/, failed/ or held/. */
export interface Occupant {
  /** At the input's own name (not a report's). */
  input: boolean;
  /** A regular file (an object always is). */
  regular: boolean;
  mtimeMs: number;
  /** The input there is this claim's own (a bucket's copy with the claim's ETag). */
  claimed: boolean;
}

/** Gives a claimed input's private copy its slot (taken only once there is an input to copy). */
export type NewSlot = () => Promise<Slot>;

/** A place in the layout: the top of the location or one of its sub-locations. */
export type Where = keyof DropLayout | 'top';

/** Where a finishing input's reports are written before they are put in place beside it. */
export type Staged = Omit<ReportTarget, 'inputShownAs'>;

export interface DropOptions {
  layout?: DropLayout;
  /** Where private copies of claimed inputs are made (../work-folder.ts); default the system's temporary folder. */
  workDir?: string;
  /** Where claims are made instead of the store's own leases (a database's, beside its ledger). */
  leases?: LeaseStore;
  /** The ledger this watcher writes to: the location is marked as its (src/storage/ledger/ledger-mark.ts). Absent: not marked. */
  ledger?: LedgerMark;
  /** Told at debug level what a store could not tidy (a stray temporary of a report it could not remove). */
  logger?: Pick<Logger, 'debug'>;
  /** The calendar clock (core/clock.ts): what the timestamped names of done/, failed/ and a requeue say. */
  clock?: Clock;
  /** Told once per name about drops that are refused and left where they are (a link, a key too long for S3). */
  onRefused?: (name: string, why: string) => void;
  /** Largest input read for processing; a larger one is set aside to failed/ unread. Default 1 GiB. */
  maxInputBytes?: number;
}

/** Default of `maxInputBytes` (the `watchMaxInputBytes` setting). */
const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024 * 1024;

/**
 * The drop protocol of `htorder watch`, written once for every store (docs/architecture.md#the-drop-protocol):
 * an input at the top is claimed with a lease (one instance wins; an expired one is taken
 * over), moved into processing/ and copied privately; it finishes into done/, failed/ or held/
 * under a free name — its own, or a timestamped one beside an older file — with its reports
 * put in place first, the input last; a finish cut short is resumed under its own name; a
 * changed or approved input goes back to the top under a free name. The stores (folder-source.ts,
 * bucket-source.ts) say how each step is done where they keep files: the abstract members below.
 * `C`: what a store keeps of a claim; `G`: what it reads of an entry it gives back.
 */
export abstract class Drop<C, G> implements DropSource {
  abstract readonly location: string;
  abstract readonly needsStability: boolean;
  protected readonly layout: Required<DropLayout>;
  private readonly slots = new WorkSlots();
  private work: string | undefined;

  /** Every claim is a lease of this store: the store's own, or `DropOptions.leases`. */
  protected readonly leases: LeaseStore;

  constructor(
    ownLeases: LeaseStore,
    protected readonly options: DropOptions,
  ) {
    this.leases = options.leases ?? ownLeases;
    this.layout = { ...DEFAULT_LAYOUT, ...options.layout };
  }

  /** Largest input taken for processing (`DropOptions.maxInputBytes`); a larger one is set aside to failed/ unread. */
  protected get maxInputBytes(): number {
    return this.options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
  }

  /** Checks the store and makes its layout; SourceError when it cannot be used. */
  protected abstract open(): Promise<void>;
  abstract list(): Promise<ListedInput[]>;
  /** The lease name of `name`'s claim. */
  protected abstract claimName(name: string): string;
  /** Names in processing/ and claims there may be orphans of (unfiltered). */
  protected abstract orphanNames(): Promise<Iterable<string>>;
  /**
   * With the claim held: the input into processing/ (from the top when `fromTop` and it is not
   * there yet), then copied into a slot from `slot()`; undefined when there is nothing to take.
   */
  protected abstract take(name: string, slot: NewSlot, fromTop: boolean): Promise<Taken<C> | undefined>;
  protected abstract recheck(name: string, facts: C, when: 'submit' | 'finish'): Promise<InputChange | undefined>;
  /** When the input was claimed, by the store's clock; undefined when processing/ no longer holds this claim's input. */
  protected abstract claimedAt(name: string, facts: C): Promise<number | undefined>;
  /** What is at `name` and its reports' names in `outcome` (`facts`: of the claim finishing there). */
  protected abstract occupants(outcome: FinishOutcome, name: string, facts?: C): Promise<Occupant[]>;
  /** The names in `outcome` that start with `start`; a store that can tell, only of entries modified at or after `since`. */
  protected abstract namesIn(outcome: FinishOutcome, start: string, since: number): Promise<string[]>;
  /** Where the reports of the input finishing as `final` are written (and how), before place(). */
  protected abstract stage(outcome: FinishOutcome, final: string, facts: C, copy: string): Promise<Staged>;
  /** Puts the written report `kind` in place beside the input's final name. */
  protected abstract place(outcome: FinishOutcome, final: string, kind: keyof ReportPaths, from: string): Promise<void>;
  protected abstract removeReports(
    where: FinishOutcome,
    name: string,
    kinds?: readonly (keyof ReportPaths)[],
  ): Promise<void>;
  /** Moves the input from processing/ to `final` in `outcome`, last; what the settle window watches, if anything. */
  protected abstract moveIn(
    outcome: FinishOutcome,
    name: string,
    final: string,
    facts: C,
    placed: () => Promise<void>,
  ): Promise<Finished | undefined>;
  /** Gives a changed input back (ClaimedInput.requeue), the claim still held; where it is now. */
  protected abstract requeueIn(name: string, facts: C): Promise<string>;
  /** An entry of `where` to give back to the top (checked to be `expected`); undefined when gone. */
  protected abstract toGiveBack(where: FinishOutcome, name: string, expected?: Finished): Promise<G | undefined>;
  /** Moves `entry` to `candidate` at the top unless something is there: its location, 'taken', or 'gone'. */
  protected abstract putAtTop(entry: G, candidate: string): Promise<string | 'taken' | 'gone'>;
  /** Where `name` in `which` is, for people: a path or an s3:// URL. */
  protected abstract where(which: Where, name: string): string;
  /** The location's mark's text, or undefined; written only where none is unless `replace`. */
  protected abstract readMark(): Promise<string | undefined>;
  protected abstract writeMark(text: string, replace: boolean): Promise<boolean>;
  protected abstract closeStore(): Promise<void>;
  abstract listHeld(): Promise<string[]>;
  abstract heldHash(name: string): Promise<string | undefined>;

  async init(): Promise<void> {
    assertLayout(this.layout, this.needsStability ? 'folder' : 'prefix');
    try {
      await this.open();
      await this.checkMark(this.options.ledger?.replace === true);
      this.work = await makeWorkFolder(this.options.workDir);
    } catch (err) {
      await this.closeStore().catch(() => undefined); // refused or unusable, it holds nothing (not left to the GC)
      throw err;
    }
  }

  /** Throws DropTakenError when the location is marked as another ledger's (made ours when it has no mark). */
  private async checkMark(replace = false): Promise<void> {
    const { ledger } = this.options;
    const io = { read: () => this.readMark(), write: (t: string, r: boolean) => this.writeMark(t, r) };
    const refused = ledger && (await markFor(ledger, this.location, replace, io));
    if (refused?.kind === 'taken') throw new DropTakenError(refused.why);
    if (refused) throw new SourceError(refused.why, 'unavailable');
  }

  claim(name: string): Promise<ClaimedInput | undefined> {
    return this.claimOne(name, true);
  }

  async claimOrphans(): Promise<ClaimedInput[]> {
    await this.checkMark();
    const names = new Set([...(await this.orphanNames())].filter((n) => classifyName(n).take));
    return claimEach(names, (name) => this.claimOne(name, false), { renewEveryMs: this.leases.leaseMs / 3 });
  }

  /** The lease of `name`'s claim: the store's own name, or (a LeaseStore given) where it is for people, alike in every instance. */
  protected leaseName(name: string): string {
    return this.options.leases ? this.where('processing', `.${name}.claim`) : this.claimName(name);
  }

  /** Takes the claim, then the input; the claim is given back when there is nothing to take or taking fails. */
  private async claimOne(name: string, fromTop: boolean): Promise<ClaimedInput | undefined> {
    if (!classifyName(name).take) return undefined;
    const lease = await this.leases.tryAcquire(this.leaseName(name));
    if (!lease) return undefined;
    let slot: Slot | undefined;
    let taken: Taken<C> | undefined;
    try {
      taken = await this.take(name, async () => (slot = await this.slots.take(initialised(this.work))), fromTop);
    } catch (err) {
      // Not taken after all: the input stays where an orphan search or a scan finds it.
      await slot?.drop().catch(() => undefined);
      await lease.release().catch(() => undefined);
      throw err;
    }
    if (taken && slot) return this.claimed(name, lease, slot, taken);
    await slot?.drop();
    await lease.release();
    return undefined;
  }

  /** The claimed input as the pipeline sees it; the copy goes with the claim (finish, release, requeue, forget). */
  private claimed(name: string, lease: Lease, slot: Slot, taken: Taken<C>): ClaimedInput {
    const { facts, sha256, refused, artworkFolder } = taken;
    // Nothing irreversible without the claim: taken over, the taker finishes (the caller reports the input lost).
    const holdClaim = async (): Promise<void> => {
      if (!(await lease.renew())) throw new ClaimLostError(`the claim on ${name} was taken over by another instance`);
    };
    let letGo = false; // let go of here: a renewal sent meanwhile finds it released, which is no takeover
    const input: ClaimedInput = {
      name,
      path: slot.pathFor(name),
      location: this.where('processing', name),
      ...(sha256 === undefined ? {} : { sha256 }),
      ...(artworkFolder ? { artworkFolder } : {}),
      ...(refused === undefined ? {} : { refused }),
      // A renewal sent before the claim was let go may be answered after: the lease is gone
      // then, released by this very holder, which is no takeover either.
      renew: async () => letGo || (await lease.renew()) || letGo,
      finish: async (outcome, writeReports) => {
        await holdClaim();
        const final = await this.finish(outcome, name, facts, input, writeReports);
        await input.release();
        return this.where(outcome, final);
      },
      release: async () => {
        letGo = true;
        await lease.release();
        await slot.drop();
      },
      forget: () => slot.drop(),
      recheck: (when) => this.recheck(name, facts, when),
      requeue: async () => {
        await holdClaim();
        await slot.drop();
        const at = await this.requeueIn(name, facts);
        await input.release();
        return at;
      },
    };
    return input;
  }

  /**
   * Puts the reports in `outcome` under the input's free name, then moves the input there;
   * returns that name. A crash between the two leaves reports under its name without the
   * input: this input's own cut-short finish (freeName), finished over, not beside.
   */
  private async finish(
    outcome: FinishOutcome,
    name: string,
    facts: C,
    input: ClaimedInput,
    writeReports: WriteReports | undefined,
  ): Promise<string> {
    const { name: final, resumed } = await this.freeName(outcome, name, facts);
    const staged = await this.stage(outcome, final, facts, input.path);
    const { paths } = staged;
    const placed: (keyof ReportPaths)[] = [];
    try {
      const wrote = (await writeReports?.({ ...staged, inputShownAs: this.where(outcome, final) })) ?? {};
      for (const kind of REPORT_KINDS) {
        if (wrote[kind] !== undefined) {
          await this.place(outcome, final, kind, paths[kind]);
          placed.push(kind);
        } else if (resumed) await this.removeReports(outcome, final, [kind]);
      }
    } catch (err) {
      await Promise.all(REPORT_KINDS.map((kind) => rm(paths[kind], { force: true })));
      await this.removeReports(outcome, final, placed);
      throw err;
    }
    const moved = await this.moveIn(outcome, name, final, facts, () => this.removeReports(outcome, final, placed));
    if (moved) input.moved = moved;
    return final;
  }

  /**
   * The name the input takes in `outcome`: its own, or a timestamped one when an older input
   * of the same name, or its reports, are there. Its own also when what is there is this
   * input's own finish cut short (`resumed`): regular files no older than the claim, and no
   * input but this claim's own. An older input's reports predate the claim.
   */
  protected async freeName(
    outcome: FinishOutcome,
    name: string,
    facts?: C,
  ): Promise<{ name: string; resumed: boolean }> {
    return firstFree(name, this.options.clock, async (candidate, first) => {
      const there = await this.occupants(outcome, candidate, facts);
      if (there.length === 0) return { name: candidate, resumed: false };
      if (!first || facts === undefined) return 'taken';
      // Asked only when something is there: a request of its own for a bucket.
      const at = await this.claimedAt(name, facts);
      const own = (o: Occupant) => at !== undefined && o.regular && o.mtimeMs >= at && (!o.input || o.claimed);
      if (there.every(own)) return { name: candidate, resumed: true };
      const stamped = at === undefined ? undefined : await this.cutShortStamped(outcome, name, facts, at, own);
      return stamped === undefined ? 'taken' : { name: stamped, resumed: true };
    });
  }

  /**
   * The timestamped name this claim's finish, cut short, was putting the input under beside an
   * older input of its name (a name dropped again the next night): the one holding only what is
   * `own`. Its stamp was the clock's time then, so the finish resumed now would take another.
   */
  private async cutShortStamped(
    outcome: FinishOutcome,
    name: string,
    facts: C,
    claimedAt: number,
    own: (o: Occupant) => boolean,
  ): Promise<string | undefined> {
    // A name dropped every night leaves a stamped name a night: only those touched since the claim are looked at.
    const entries = await this.namesIn(outcome, stampedStart(name), claimedAt);
    for (const candidate of stampedNamesOf(name, entries)) {
      const there = await this.occupants(outcome, candidate, facts);
      if (there.length > 0 && there.every(own)) return candidate;
    }
    return undefined;
  }

  takeBack(name: string): Promise<string | undefined> {
    return classifyName(name).take ? this.giveBack('held', name) : Promise.resolve(undefined);
  }

  /**
   * Moves an entry of `where` back to the top under a free name (a new drop of its name keeps
   * its own), then removes its reports there: it is processed again in full.
   */
  protected async giveBack(where: FinishOutcome, name: string, expected?: Finished): Promise<string | undefined> {
    const entry = await this.toGiveBack(where, name, expected);
    if (entry === undefined) return undefined;
    const back = await firstFree(name, this.options.clock, (candidate) => this.putAtTop(entry, candidate));
    if (back === 'gone') return undefined;
    await this.removeReports(where, name);
    return back;
  }

  async close(): Promise<void> {
    await this.closeStore();
    if (this.work) await rm(this.work, { recursive: true, force: true });
  }
}

/**
 * The first free name of `name`: itself, then variants timestamped by `clock` (drop-names.ts)
 * until `attempt` says one was free (anything but 'taken').
 */
export async function firstFree<T>(
  name: string,
  clock: Clock | undefined,
  attempt: (candidate: string, first: boolean) => Promise<T | 'taken'>,
): Promise<T> {
  const now = nowDate(clock ?? systemClock);
  for (let n = 0; ; n++) {
    const result = await attempt(n === 0 ? name : timestampedName(name, now, n - 1), n === 0);
    if (result !== 'taken') return result;
  }
}
