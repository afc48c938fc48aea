import type { LedgerStore } from '../storage/ledger/model.js';
import { type ApprovalNote, approvalName, approvalNotes, approves } from './guard-notes.js';

/**
 * `htorder approve` (docs/guardrails.md): an approval is recorded in the ledger for the exact
 * fingerprint of the job that was held, so the next run (or the watcher) submits exactly that
 * job, once; a job changed since is held again and needs approving again.
 */

export interface ApproveRequest {
  /** sha256 of the input whose held jobs to approve (the file's bytes, or its report's `input.sha256`). */
  sha256: string;
  /** Only these orders; all of the input's when absent. */
  orders?: readonly string[];
  by: string;
  note?: string;
}

/** The held jobs of an input, each approved now (or already). */
export async function approveInput(
  ledger: LedgerStore,
  account: string,
  req: ApproveRequest,
  now = new Date(),
): Promise<ApprovalNote[]> {
  const wanted = req.orders ? new Set(req.orders) : undefined;
  const notes = (await waiting(ledger, account)).filter(
    (n) => n.input.sha256 === req.sha256 && (!wanted || wanted.has(n.orderNumber)),
  );
  const approved: ApprovalNote[] = [];
  for (const note of notes) {
    const next: ApprovalNote = {
      ...note,
      approval: {
        fingerprint: note.fingerprint,
        by: req.by,
        at: now.toISOString(),
        ...(req.note ? { note: req.note } : {}),
      },
    };
    await ledger.writeNote(account, approvalName(note.orderNumber), next);
    approved.push(next);
  }
  return approved;
}

/** The jobs that wait for approval on the account: held, not approved, and not submitted since. */
export async function waiting(ledger: LedgerStore, account: string): Promise<ApprovalNote[]> {
  const notes = await approvalNotes(ledger, account);
  const open: ApprovalNote[] = [];
  for (const note of notes) {
    if (approves(note, note.fingerprint)) continue;
    const entry = await ledger.read({ account, orderNumber: note.orderNumber });
    if (entry?.state !== 'submitted') open.push(note);
  }
  return open.sort((a, b) => (a.heldAt < b.heldAt ? -1 : a.heldAt > b.heldAt ? 1 : 0));
}
