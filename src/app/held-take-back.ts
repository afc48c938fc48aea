import pLimit from 'p-limit';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log/logger.js';
import { approvalsMark, fullyApproved, NOTE_READS, pruneApprovalNotes } from '../pipeline/approve.js';
import { heldName } from '../pipeline/guard-notes.js';
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
  const { source, logger } = opts;
  let known = new Map<string, Known>();
  let marks: string | undefined;
  let listing: string | undefined;
  const owners = new Map<string, HeldOwner>();
  let nextPrune = 0;
  let pruning = false;

  const prune = async (): Promise<void> => {
    const own = await opts.own();
    owners.set(own.account, own);
    for (const { ledger, account } of owners.values()) {
      const held = new Set([...known.values()].filter((k) => k.account === account).map((k) => k.sha256));
      const gone = await pruneApprovalNotes(ledger, account, opts.clock.now(), (_, sha) => held.has(sha));
      if (gone > 0) logger.info({ account, inputs: gone }, 'removed old approval notes');
    }
  };

  return async () => {
    const names = (await source.listHeld()).sort();
    if (names.length > 0 || known.size > 0) {
      const ownerOf = new Map<string, HeldOwner>();
      for (const name of names) ownerOf.set(name, await opts.ownerOf(name));
      const accounts = new Map([...ownerOf.values()].map((o) => [o.account, o]));
      for (const [account, o] of accounts) owners.set(account, o);
      const nowMarks = JSON.stringify(
        await Promise.all(
          [...accounts.values()].map(async (o) => [o.account, await approvalsMark(o.ledger, o.account)]),
        ),
      );
      const nowListing = JSON.stringify(names);
      if (nowMarks !== marks || nowListing !== listing) {
        // Approvals unchanged: only the inputs new in held/ can be approved already.
        const fresh = nowMarks === marks ? (name: string) => !known.has(name) : () => true;
        const looked = await look(names, ownerOf, fresh);
        known = looked.known;
        marks = nowMarks;
        // An input that could not be hashed (busy, too many files open) is looked at again next scan.
        listing = looked.unhashed ? undefined : nowListing;
      }
    }
    if (!pruning && Date.now() >= nextPrune) {
      nextPrune = Date.now() + (opts.pruneEveryMs ?? 3_600_000);
      pruning = true;
      // Off the scan: housekeeping never holds a scan up, and its failure is only logged.
      prune()
        .catch((err: unknown) => logger.debug({ err: (err as Error).message }, 'could not remove old approval notes'))
        .finally(() => {
          pruning = false;
        });
    }
  };

  /** Hashes what is new in held/, drops the notes of inputs gone, takes back the approved ones. */
  async function look(
    names: readonly string[],
    ownerOf: ReadonlyMap<string, HeldOwner>,
    fresh: (name: string) => boolean,
  ): Promise<{ known: Map<string, Known>; unhashed: boolean }> {
    const limit = pLimit(NOTE_READS);
    const now = new Map<string, Known>();
    let unhashed = false;
    await Promise.all(
      names.map((name) =>
        limit(async () => {
          const owner = ownerOf.get(name);
          if (!owner) return;
          const before = known.get(name);
          const sha256 = before?.account === owner.account ? before.sha256 : await source.heldHash(name);
          if (sha256 !== undefined) now.set(name, { ...owner, sha256 });
          else unhashed = true;
        }),
      ),
    );
    const listed = new Set(names);
    const live = new Set([...now.values()].map((k) => `${k.account}\n${k.sha256}`));
    for (const [name, k] of known) {
      if (listed.has(name) || live.has(`${k.account}\n${k.sha256}`)) continue;
      // Gone from held/ but not taken back by us: nobody can approve it there any more.
      await k.ledger.deleteNote(k.account, heldName(k.sha256));
    }
    logger.debug({ held: now.size }, 'looked at the inputs in held/');
    await Promise.all(
      [...now]
        .filter(([name]) => fresh(name))
        .map(([name, k]) =>
          limit(async () => {
            const jobs = await fullyApproved(k.ledger, k.account, k.sha256);
            if (jobs.length === 0) return;
            const back = await source.takeBack(name);
            now.delete(name);
            if (back)
              logger.info(
                { file: back, orders: jobs.map((j) => j.orderNumber) },
                'approved input taken back from held',
              );
          }),
        ),
    );
    return { known: now, unhashed };
  }
}
