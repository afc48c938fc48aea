import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openApiSession } from '../../src/app/api-session.js';
import { pipelineOver } from '../../src/app/pipeline-context.js';
import { processInput } from '../../src/pipeline/process-input.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import type { LedgerEntry, LedgerKey, LockGuard } from '../../src/storage/ledger/model.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * An order the ledger had no entry for as its input began is not read again by the ledger
 * look-up: that first read, made without the lock like the look-up's, stands for it. Whatever
 * another writer (another process on the same ledger) does after it is seen by the read under
 * the order's lock: the order is reported already-submitted and never created twice. Each test
 * lets the other writer act at the worst moment, right before this run takes the order's lock.
 */

/** The real folder ledger, counting the reads of each order and letting another writer act before a lock. */
class WatchedLedger extends FolderLedger {
  readonly reads = new Map<string, number>();
  /** Run once, right before the lock of that order is taken. */
  readonly beforeLock = new Map<string, () => Promise<void>>();

  override async read(key: LedgerKey, options?: { guard?: LockGuard }): Promise<LedgerEntry | undefined> {
    this.reads.set(key.orderNumber, (this.reads.get(key.orderNumber) ?? 0) + 1);
    return super.read(key, options);
  }

  override async withLock<T>(key: LedgerKey, fn: (guard: LockGuard) => Promise<T>): Promise<T> {
    const act = this.beforeLock.get(key.orderNumber);
    this.beforeLock.delete(key.orderNumber);
    await act?.();
    return super.withLock(key, fn);
  }
}

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** `command` of `file` in this process over `ledger` (the CLI's own pipeline, another ledger object). */
async function runOver(ledger: FolderLedger, file: string, command: 'run' | 'plan' = 'run') {
  const env = h.env();
  const session = await openApiSession({ flags: {}, env, cwd: h.workDir, stderr: sink().stream });
  const pipeline = pipelineOver(session, { command, cwd: h.workDir, env }, ledger);
  try {
    const outcome = await processInput(file, await pipeline.context());
    return Object.fromEntries(outcome.report!.jobs.map((j) => [j.orderNumber, j.status]));
  } finally {
    await pipeline.close();
  }
}

/** Another htorder process on the same state dir sends order N-2 (the same manifest entry). */
function otherWriterSends(stateDir: string): () => Promise<void> {
  return async () => {
    // The same entry as this run's N-2 (the same fingerprint), alone.
    const [head, , second] = manifest('N', 2).split(/(?= {2}- orderNumber: )/);
    const file = await h.write('other.yaml', `${head}${second}`);
    const r = await h.cli('run', [file], { env: { HTORDER_STATE_DIR: stateDir } });
    expect(r.code, r.stderr).toBe(0);
    expect((await h.report(file)).jobs.map((j) => [j.orderNumber, j.status])).toEqual([['N-2', 'submitted']]);
  };
}

async function jobsOf(orderNumber: string): Promise<number> {
  return (await h.sandbox.admin.jobs()).filter((j) => j.orderNumber === orderNumber).length;
}

describe('an order read once outside its lock, and another writer after that read', () => {
  it('a vouching ledger: the other writer sends it before this run locks it to send; found under the lock, not sent', async () => {
    // The ledger vouches for the account (a run has recorded every order of an input).
    const first = await h.cli('run', [await h.write('first.yaml', manifest('V', 1))]);
    expect(first.code, first.stderr).toBe(0);
    const file = await h.write('night.yaml', manifest('N', 3));
    const ledger = new WatchedLedger(h.stateDir);
    ledger.beforeLock.set('N-2', otherWriterSends(h.stateDir));

    const status = await runOver(ledger, file);

    expect(status).toEqual({ 'N-1': 'submitted', 'N-2': 'already-submitted', 'N-3': 'submitted' });
    expect(await jobsOf('N-2')).toBe(1);
    // Read as the input began (the other-writer look), then only under the lock.
    expect(ledger.reads.get('N-1')).toBe(2);
  });

  it('a ledger that cannot vouch: the other writer sends it before this run locks it to check the account; found, no dry run spent', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'htorder-fresh-'));
    const file = await h.write('night.yaml', manifest('N', 3));
    const ledger = new WatchedLedger(stateDir);
    ledger.beforeLock.set('N-2', otherWriterSends(stateDir));
    await h.sandbox.admin.resetCalls();

    const status = await runOver(ledger, file);

    expect(status).toEqual({ 'N-1': 'submitted', 'N-2': 'already-submitted', 'N-3': 'submitted' });
    expect(await jobsOf('N-2')).toBe(1);
    // A dry run and a create for N-1 and N-3 (this run) and N-2 (the other writer): none more.
    expect((await h.sandbox.admin.calls())['POST /Jobs']).toBe(6);
    // Read as the input began (counting the orders to check), under the lock of the check, under the lock of the send.
    expect(ledger.reads.get('N-1')).toBe(3);
  });

  it('plan reads each order once', async () => {
    const sent = await h.cli('run', [await h.write('sent.yaml', manifest('S', 2))]);
    expect(sent.code, sent.stderr).toBe(0);
    const file = await h.write('plan.yaml', manifest('S', 3));
    const ledger = new WatchedLedger(h.stateDir);

    const status = await runOver(ledger, file, 'plan');

    expect(status).toEqual({ 'S-1': 'already-submitted', 'S-2': 'already-submitted', 'S-3': 'valid' });
    expect(Object.fromEntries(ledger.reads)).toEqual({ 'S-1': 1, 'S-2': 1, 'S-3': 1 });
  });
});
