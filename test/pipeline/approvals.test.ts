import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runApprove, type ApproveInput } from '../../src/cli/approve-command.js';
import { pruneApprovalNotes } from '../../src/pipeline/approve.js';
import { type HeldNote, MAX_HELD_JOBS } from '../../src/pipeline/guard-notes.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

const OVER = { HTORDER_MAX_JOB_COST: '1' };

async function creates(): Promise<number> {
  return (await h.sandbox.admin.jobs()).length;
}

async function approve(opts: Partial<ApproveInput>): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runApprove(
    { paths: [], flags: {}, ...opts },
    { stdout: out.stream, stderr: err.stream, env: h.env(), cwd: h.workDir },
  );
  return { code, stdout: out.text(), stderr: err.text() };
}

/** The ledger's approval notes of the sandbox account, by kind. */
async function notes(): Promise<{ held: string[]; approved: string[] }> {
  const root = join(h.stateDir, 'ledger');
  const names: string[] = [];
  for (const account of await readdir(root)) names.push(...(await readdir(join(root, account))));
  return {
    held: names.filter((n) => n.startsWith('.held-')),
    approved: names.filter((n) => n.startsWith('.approved-')),
  };
}

describe('approvals are keyed by the input and the job, not the order number', () => {
  it("another input held with the victim's order number neither wipes the approval nor uses it", async () => {
    const victim = await h.write('victim.yaml', manifest([{ orderNumber: 'V-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [victim], { env: OVER })).code).toBe(4);
    // The dropper's input: the same order number, other items; held too, before the approval.
    const other = await h.write('other.yaml', manifest([{ orderNumber: 'V-1', items: ITEMS.print }]));
    expect((await h.cli('run', [other], { env: OVER })).code).toBe(4);
    const ok = await approve({ paths: [victim], note: 'checked' });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('approved V-1');
    const again = await approve({ paths: [victim] });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('V-1 was already approved by');

    // The victim's very job, copied into another input beside one more job: not approved there.
    const copy = await h.write(
      'copy.yaml',
      manifest([
        { orderNumber: 'V-1', items: ITEMS.reorder },
        { orderNumber: 'C-2', items: ITEMS.reorder },
      ]),
    );
    expect((await h.cli('run', [copy], { env: OVER })).code).toBe(4);
    expect((await h.report(copy)).jobs.map((j) => j.status)).toEqual(['awaiting-approval', 'awaiting-approval']);
    // The dropper's input runs again after the approval: still held, its job not approved.
    expect((await h.cli('run', [other], { env: OVER })).code).toBe(4);
    expect(await creates()).toBe(0);

    // The approved input sends its job, once.
    const sent = await h.cli('run', [victim], { env: OVER });
    expect(sent.code, sent.stderr).toBe(0);
    expect((await h.report(victim)).jobs[0]!.status).toBe('submitted');
    expect(await creates()).toBe(1);
    // Its notes were used: they go; the two other inputs' held notes stay.
    expect((await notes()).held).toHaveLength(2);
    expect((await notes()).approved).toHaveLength(0);
  });
});

describe('how many jobs of one input may wait', () => {
  it(`an input with more than ${MAX_HELD_JOBS} jobs to hold fails, saying why, and keeps none for approval`, async () => {
    const file = await h.write('flood.yaml', manifest('FLOOD', MAX_HELD_JOBS + 1));
    const run = await h.cli('run', [file], { env: OVER });
    expect(run.code).toBe(1);
    const report = await h.report(file);
    expect(report.jobs.every((j) => j.status === 'invalid')).toBe(true);
    const cap = report.jobs[0]!.errors.find((e) => e.code === 'approval.too-many-held');
    expect(cap?.message).toContain(`${MAX_HELD_JOBS + 1} jobs of this input wait for approval, more than the 1000`);
    expect(await readFile(`${file}.errors.txt`, 'utf8')).toContain('split the input');
    expect((await notes()).held).toEqual([]);
    expect((await approve({ list: true })).stderr).toContain('nothing waits');
    expect(await creates()).toBe(0);
  });
});

describe('approve --list', () => {
  it('shows a page at a time, oldest first, and the offset of the next', async () => {
    const file = await h.write('three.yaml', manifest('PAGE', 3));
    expect((await h.cli('run', [file], { env: OVER })).code).toBe(4);
    const first = await approve({ list: true, limit: 2 });
    expect(first.stderr).toContain('jobs 1–2 of those that wait');
    expect(first.stderr).toContain('more with --offset 2');
    expect(first.stderr).toContain('PAGE-1');
    expect(first.stderr).toContain('PAGE-2');
    expect(first.stderr).not.toContain('PAGE-3');
    expect(first.stderr).toContain(`in ${file}`);
    const next = JSON.parse((await approve({ list: true, limit: 2, offset: 2, json: true })).stdout) as {
      waiting: { orderNumber: string }[];
      more: boolean;
    };
    expect(next.waiting.map((j) => j.orderNumber)).toEqual(['PAGE-3']);
    expect(next.more).toBe(false);
    expect((await approve({ list: true, limit: 0 })).code).toBe(2);
  });
});

describe('old approval notes', () => {
  it('go after 30 days on the calendar clock, unless their input still waits where people see it', async () => {
    const a = await h.write('a.yaml', manifest('OLD-A', 1));
    const b = await h.write('b.yaml', manifest('OLD-B', 1));
    expect((await h.cli('run', [a, b], { env: OVER })).code).toBe(4);
    expect((await approve({ paths: [a] })).code).toBe(0);
    const ledger = new FolderLedger(h.stateDir);
    const folder = join(h.stateDir, 'ledger', (await readdir(join(h.stateDir, 'ledger')))[0]!);
    const { account } = JSON.parse(await readFile(join(folder, '.account'), 'utf8')) as { account: string };
    const keepB = (held: HeldNote | undefined) => held?.input.file === b;
    const day = 86_400_000;
    expect(await pruneApprovalNotes(ledger, account, Date.now() + 29 * day, keepB)).toBe(0);
    expect((await notes()).held).toHaveLength(2);
    expect(await pruneApprovalNotes(ledger, account, Date.now() + 31 * day, keepB)).toBe(1);
    // a.yaml's held and approved notes went; b.yaml's, kept, stayed.
    expect(await notes()).toEqual({ held: [expect.any(String)], approved: [] });
    const listed = await approve({ list: true });
    expect(listed.stderr).toContain('OLD-B');
    expect(listed.stderr).not.toContain('OLD-A');
  });
});
