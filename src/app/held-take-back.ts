import pLimit from 'p-limit';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log/logger.js';
import { approvalsMark, fullyApproved, NOTE_READS, pruneApprovalNotes } from '../pipeline/approve.js';
import { heldName, takeBackLock } from '../pipeline/guard-notes.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import type { DropSource } from '../watch/sources/model.js';

/** The ledger and account a held input's approvals are in (its route's). */
export interface HeldOwner {
  ledger: LedgerStore;
  account: string;
}

interface Known extends HeldOwner {
  sha256: string;
}

export interface TakeBackOptions {
  source: DropSource;
  /** Whose input `name` is (the watcher's own account, or its route's). */
  ownerOf(name: string): Promise<HeldOwner>;
  /** The watcher's own account, whose old approval notes go even while nothing is held. */
  own(): Promise<HeldOwner>;
  logger: Logger;
  /** The calendar clock the notes' ages are judged on. */
  clock: Clock;
  /** How often old approval notes are looked for; default an hour. */
  pruneEveryMs?: number;
}

/**
 * Gives back to the top of the drop location each input in held/ whose waiting jobs are all
 * approved (docs/guardrails.md): processed again, it sends exactly the approved jobs, once.
 * It costs nothing per scan but the listing of held/ and one small note per account: the held
 * inputs are hashed and their notes read only when held/ or the account's approvals changed
 * (`approve` changes its `.approvals` note), each file hashed once while it stays, a few at a
 * time. An input that leaves held/ otherwise (removed by someone) takes its held note along;
 * old approval notes go once an hour, except those of inputs still in held/.
 */
export function takeBackApproved(opts: TakeBackOptions): () => Promise<void> {
  const held = new HeldInputs(opts);
  return () => held.scan();
}

class HeldInputs {
  /** Each input in held/ as last looked at: its sha256 and whose it is. */
  private known = new Map<string, Known>();
  /** The accounts' approvals marks and the listing of held/ at the last look. */
  private marks: string | undefined;
  private listing: string | undefined;
  /** Every account seen, for pruning. */
  private readonly owners = new Map<string, HeldOwner>();
  private nextPrune = 0;
  private pruning = false;

  constructor(private readonly opts: TakeBackOptions) {}

  async scan(): Promise<void> {
    const names = (await this.opts.source.listHeld()).sort();
    if (names.length > 0 || this.known.size > 0) await this.lookIfChanged(names);
    this.pruneNow();
  }

  /** Looks at held/ when its listing or an account's approvals changed since the last look. */
  private async lookIfChanged(names: string[]): Promise<void> {
    const ownerOf = new Map<string, HeldOwner>();
    for (const name of names) ownerOf.set(name, await this.opts.ownerOf(name));
    const accounts = new Map([...ownerOf.values()].map((o) => [o.account, o]));
    for (const [account, o] of accounts) this.owners.set(account, o);
    const marks = JSON.stringify(
      await Promise.all([...accounts.values()].map(async (o) => [o.account, await approvalsMark(o.ledger, o.account)])),
    );
    const listing = JSON.stringify(names);
    if (marks === this.marks && listing === this.listing) return;
    // Approvals unchanged: only the inputs new in held/ can be approved already.
    const before = this.known;
    const fresh = marks === this.marks ? (name: string) => !before.has(name) : () => true;
    const { known, unhashed } = await this.hash(names, ownerOf);
    await this.forgetGone(names, known);
    this.known = known;
    this.marks = marks;
    // An input that could not be hashed (busy, too many files open) is looked at again next scan.
    this.listing = unhashed ? undefined : listing;
    this.opts.logger.debug({ held: known.size }, 'looked at the inputs in held/');
    await this.takeBackApproved(known, fresh);
  }

  /** Each held input's sha256: kept from the last look, else hashed, a few at a time. */
  private async hash(
    names: readonly string[],
    ownerOf: ReadonlyMap<string, HeldOwner>,
  ): Promise<{ known: Map<string, Known>; unhashed: boolean }> {
    const limit = pLimit(NOTE_READS);
    const known = new Map<string, Known>();
    let unhashed = false;
    await Promise.all(
      names.map((name) =>
        limit(async () => {
          const owner = ownerOf.get(name);
          if (!owner) return;
          const before = this.known.get(name);
          const sha256 = before?.account === owner.account ? before.sha256 : await this.opts.source.heldHash(name);
          if (sha256 !== undefined) known.set(name, { ...owner, sha256 });
          else unhashed = true;
        }),
      ),
    );
    return { known, unhashed };
  }

  /** An input gone from held/ but not taken back by us (removed by someone): nobody can approve it there any more. */
  private async forgetGone(names: readonly string[], known: ReadonlyMap<string, Known>): Promise<void> {
    const listed = new Set(names);
    const live = new Set([...known.values()].map((k) => `${k.account}\n${k.sha256}`));
    for (const [name, k] of this.known) {
      if (listed.has(name) || live.has(`${k.account}\n${k.sha256}`)) continue;
      await k.ledger.deleteNote(k.account, heldName(k.sha256));
    }
  }

  /** Moves each input whose waiting jobs are all approved back to the top, to be processed again. */
  private async takeBackApproved(known: Map<string, Known>, fresh: (name: string) => boolean): Promise<void> {
    const limit = pLimit(NOTE_READS);
    const { source, logger } = this.opts;
    await Promise.all(
      [...known]
        .filter(([name]) => fresh(name))
        .map(([name, k]) =>
          limit(async () => {
            const jobs = await fullyApproved(k.ledger, k.account, k.sha256);
            if (jobs.length === 0) return;
            // Under the input's lock: another watcher on the folder may be taking it back now.
            const back = await k.ledger.withAccountLock(k.account, takeBackLock(k.sha256), () => source.takeBack(name));
            known.delete(name);
            if (back)
              logger.info(
                { file: back, orders: jobs.map((j) => j.orderNumber) },
                'approved input taken back from held',
              );
          }),
        ),
    );
  }

  /** Old approval notes, once in `pruneEveryMs` (and at the first scan), off the scan: housekeeping never holds one up. */
  private pruneNow(): void {
    if (this.pruning || Date.now() < this.nextPrune) return;
    this.nextPrune = Date.now() + (this.opts.pruneEveryMs ?? 3_600_000);
    this.pruning = true;
    this.prune()
      .catch((err: unknown) =>
        this.opts.logger.debug({ err: (err as Error).message }, 'could not remove old approval notes'),
      )
      .finally(() => {
        this.pruning = false;
      });
  }

  private async prune(): Promise<void> {
    const own = await this.opts.own();
    this.owners.set(own.account, own);
    for (const { ledger, account } of this.owners.values()) {
      const held = new Set([...this.known.values()].filter((k) => k.account === account).map((k) => k.sha256));
      const gone = await pruneApprovalNotes(ledger, account, this.opts.clock.now(), (_, sha) => held.has(sha));
      if (gone > 0) this.opts.logger.info({ account, inputs: gone }, 'removed old approval notes');
    }
    // Said whatever was removed: housekeeping that ran, found nothing old and removed nothing shows too.
    this.opts.logger.debug({ accounts: this.owners.size }, 'looked for old approval notes');
  }
}
