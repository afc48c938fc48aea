import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { type LedgerStore, lookAtEntry } from '../storage/ledger/model.js';
import {
  allApproved,
  APPROVAL_NOTE_MAX_AGE_DAYS,
  approvalIn,
  APPROVALS_MARK,
  type ApprovalsMark,
  type ApprovedJob,
  approvedName,
  type ApprovedNote,
  APPROVED_PREFIX,
  approveLock,
  HELD_PREFIX,
  heldName,
  type HeldInput,
  type HeldJob,
  type HeldNote,
  readApproved,
  readHeld,
} from './guard-notes.js';

/**
 * `htorder approve` (docs/guardrails.md): an approval is recorded in the ledger for one input
 * (its sha256) and the exact fingerprint of each job of it that was held, so the next run of
 * that input (or the watcher) submits exactly those jobs, once; a job changed since is held
 * again and needs approving again, and no other input can use or undo the approval.
 */

/** How many notes are read (or input files hashed) at once: never the open-file limit. */
export const NOTE_READS = 8;

const DAY_MS = 86_400_000;

export interface ApproveRequest {
  /** sha256 of the input whose held jobs to approve (the file's bytes, or its report's `input.sha256`). */
  sha256: string;
  /** Only these orders; all of the input's when absent. */
  orders?: readonly string[];
  by: string;
  note?: string;
}

/** A job that waits, with its input: what `approve --list` shows and approve answers. */
export interface WaitingJob extends HeldJob {
  heldAt: string;
  input: HeldInput;
  approval?: ApprovedJob;
}

export interface ApproveResult {
  /** The input's held note, undefined when the ledger holds no job of it. */
  held?: HeldNote;
  /** Approved now. */
  approved: WaitingJob[];
  /** Approved before (the same fingerprint). */
  already: WaitingJob[];
}

/** Approves the held jobs of an input (all, or `req.orders`). */
export async function approveInput(
  ledger: LedgerStore,
  account: string,
  req: ApproveRequest,
  now: Date,
): Promise<ApproveResult> {
  const held = await readHeld(ledger, account, req.sha256);
  if (!held) return { approved: [], already: [] };
  const wanted = req.orders ? new Set(req.orders) : undefined;
  const jobs = held.jobs.filter((j) => !wanted || wanted.has(j.orderNumber));
  const result: ApproveResult = { held, approved: [], already: [] };
  if (jobs.length === 0) return result;
  await ledger.withAccountLock(account, approveLock(req.sha256), async () => {
    const before = await readApproved(ledger, account, req.sha256);
    const approvals = [...(before?.approvals ?? [])];
    for (const job of jobs) {
      const given = before?.approvals.find(
        (a) => a.orderNumber === job.orderNumber && a.fingerprint === job.fingerprint,
      );
      if (given) {
        result.already.push({ ...job, heldAt: held.heldAt, input: held.input, approval: given });
        continue;
      }
      const approval: ApprovedJob = {
        orderNumber: job.orderNumber,
        fingerprint: job.fingerprint,
        by: req.by,
        at: now.toISOString(),
        ...(req.note ? { note: req.note } : {}),
      };
      // An approval of the order's earlier fingerprint is of no use any more.
      const earlier = approvals.findIndex((a) => a.orderNumber === job.orderNumber);
      if (earlier >= 0) approvals.splice(earlier, 1);
      approvals.push(approval);
      result.approved.push({ ...job, heldAt: held.heldAt, input: held.input, approval });
    }
    if (result.approved.length === 0) return;
    const note: ApprovedNote = { noteVersion: 2, sha256: req.sha256, approvals };
    await ledger.writeNote(account, approvedName(req.sha256), note);
    const mark: ApprovalsMark = { noteVersion: 1, at: now.toISOString(), serial: randomUUID() };
    await ledger.writeNote(account, APPROVALS_MARK, mark);
  });
  return result;
}

/** What changes with every approval on the account (undefined before the first). */
export async function approvalsMark(ledger: LedgerStore, account: string): Promise<string | undefined> {
  try {
    return (await ledger.readNote<ApprovalsMark>(account, APPROVALS_MARK))?.serial;
  } catch (err) {
    if (err instanceof SyntaxError) return 'unreadable';
    throw err;
  }
}

/** The waiting jobs of the input `sha256` when every one of them is approved; none otherwise. */
export async function fullyApproved(ledger: LedgerStore, account: string, sha256: string): Promise<HeldJob[]> {
  const held = await readHeld(ledger, account, sha256);
  if (!held || held.jobs.length === 0) return [];
  return allApproved(held, await readApproved(ledger, account, sha256)) ? held.jobs : [];
}

/** Records where a watcher put the held input `sha256` (`held/X`) and where it was dropped. */
export async function noteWhereHeld(
  ledger: LedgerStore,
  account: string,
  sha256: string,
  where: Pick<HeldInput, 'held' | 'dropped'>,
): Promise<void> {
  const held = await readHeld(ledger, account, sha256);
  if (!held) return;
  await ledger.writeNote(account, heldName(sha256), { ...held, input: { ...held.input, ...where } });
}

/** The held notes of the account, read a few at a time; damaged ones are skipped. */
export async function heldNotes(ledger: LedgerStore, account: string): Promise<HeldNote[]> {
  const names = await ledger.listNotes(account, HELD_PREFIX);
  const limit = pLimit(NOTE_READS);
  const notes = await Promise.all(
    names.map((name) => limit(() => readHeld(ledger, account, name.slice(HELD_PREFIX.length)).catch(noNote))),
  );
  return notes.filter((n): n is HeldNote => n !== undefined);
}

function noNote(): undefined {
  return undefined;
}

/** The held inputs the ledger knows at `path`: read from there, waiting there, or dropped there. */
export async function heldFrom(ledger: LedgerStore, account: string, path: string): Promise<HeldNote[]> {
  const notes = await heldNotes(ledger, account);
  return notes.filter((n) => n.input.file === path || n.input.held === path || n.input.dropped === path);
}

export interface WaitingPage {
  jobs: WaitingJob[];
  /** Whether more jobs wait after this page (`offset + jobs.length` is the next offset). */
  more: boolean;
}

/**
 * One page of the jobs that wait for approval on the account, oldest first: held, not
 * approved, and not submitted since. Reads every held note (one per input, a few at a time)
 * but looks up the ledger only for the jobs up to the page's end.
 */
export async function waiting(
  ledger: LedgerStore,
  account: string,
  page: { offset: number; limit: number },
): Promise<WaitingPage> {
  const notes = (await heldNotes(ledger, account)).sort((a, b) =>
    a.heldAt < b.heldAt ? -1 : a.heldAt > b.heldAt ? 1 : 0,
  );
  const limit = pLimit(NOTE_READS);
  const approved = await Promise.all(
    notes.map((n) => limit(() => readApproved(ledger, account, n.input.sha256).catch(noNote))),
  );
  const open: WaitingJob[] = [];
  let skipped = 0;
  const wanted = page.limit + 1;
  for (const [i, note] of notes.entries()) {
    const unapproved = note.jobs.filter((j) => !approvalIn(approved[i], j.orderNumber, j.fingerprint));
    for (let at = 0; at < unapproved.length && open.length < wanted; at += NOTE_READS) {
      const batch = unapproved.slice(at, at + NOTE_READS);
      // An entry that cannot be read is not known to be submitted: its job is still listed as waiting.
      const entries = await Promise.all(batch.map((j) => lookAtEntry(ledger, { account, orderNumber: j.orderNumber })));
      for (const [k, job] of batch.entries()) {
        const entry = entries[k];
        if (entry !== 'unreadable' && entry?.state === 'submitted') continue;
        if (skipped < page.offset) skipped++;
        else if (open.length < wanted) open.push({ ...job, heldAt: note.heldAt, input: note.input });
      }
    }
    if (open.length >= wanted) break;
  }
  return { jobs: open.slice(0, page.limit), more: open.length > page.limit };
}

/**
 * Removes the approval notes of inputs untouched for APPROVAL_NOTE_MAX_AGE_DAYS on `now` (the
 * session's calendar clock): held that long without approval, or approved that long ago and
 * never run since. `keep` answers whether an input still waits where an operator sees it (a
 * watcher's held/): its notes stay. Returns how many inputs' notes went.
 */
export async function pruneApprovalNotes(
  ledger: LedgerStore,
  account: string,
  now: number,
  keep: (held: HeldNote | undefined, sha256: string) => boolean | Promise<boolean>,
): Promise<number> {
  const [held, approved] = await Promise.all([
    ledger.listNotes(account, HELD_PREFIX),
    ledger.listNotes(account, APPROVED_PREFIX),
  ]);
  const shas = new Set([
    ...held.map((n) => n.slice(HELD_PREFIX.length)),
    ...approved.map((n) => n.slice(APPROVED_PREFIX.length)),
  ]);
  const oldest = now - APPROVAL_NOTE_MAX_AGE_DAYS * DAY_MS;
  const limit = pLimit(NOTE_READS);
  const gone = await Promise.all(
    [...shas]
      .filter((sha) => /^[0-9a-f]{64}$/.test(sha))
      .map((sha) =>
        limit(async () => {
          const [h, a] = await Promise.all([
            readHeld(ledger, account, sha).catch(noNote),
            readApproved(ledger, account, sha).catch(noNote),
          ]);
          const times = [h?.heldAt, ...(a?.approvals ?? []).map((x) => x.at)].map((t) => Date.parse(t ?? ''));
          const last = Math.max(...times.filter((t) => !Number.isNaN(t)), Number.NEGATIVE_INFINITY);
          // A note with no time of its own (damaged) is as old as can be.
          if (last > oldest || (await keep(h, sha))) return false;
          await ledger.deleteNote(account, heldName(sha));
          await ledger.deleteNote(account, approvedName(sha));
          return true;
        }),
      ),
  );
  return gone.filter(Boolean).length;
}
