import { readFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { openApiSession } from '../../src/app/api-session.js';
import { pipelineOver } from '../../src/app/pipeline-context.js';
import { type PipelineContext, prepareInput, processPrepared, windowedRead } from '../../src/pipeline/process-input.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { windowedHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';

/**
 * A job check refused goes through no stage: a run ends it before any other job starts, and
 * what its findings were made of is let go then, not held until the input's reports are
 * written. Counted by the read's own diagnostics, each watched by a WeakRef across a full
 * garbage collection, at the moment the first valid job would start.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const harness = windowedHarness();

const HEADER =
  'orderNumber,description,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity';
const ADDRESS = 'UPS Ground,Ana Ruiz,1 Main St,Austin,Texas,78701,United States';

/** `n` orders of three lines, every line's quantity not a number, but the orders `valid` names. */
function orders(n: number, valid: ReadonlySet<number>): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const q = (k: number) => (valid.has(i) ? String(10 + k) : 'x');
    rows.push(`PO-${i},Order ${i},${ADDRESS},Asset,A10001,${q(0)}`);
    for (let k = 1; k < 3; k++) rows.push(`PO-${i},,,,,,,,,Asset,A10001,${q(k)}`);
  }
  return `${HEADER}\n${rows.join('\n')}\n`;
}

/** `run` of `file` in this process; `atPlan` is called when the jobs check passed are about to start. */
async function run(file: string, atPlan: (held: () => number) => void) {
  const env = { ...harness().env(), HTORDER_CONCURRENCY: '1' };
  const session = await openApiSession({ flags: {}, env, cwd: harness().workDir, stderr: sink().stream });
  const pipeline = pipelineOver(
    session,
    { command: 'run', cwd: harness().workDir, env },
    new FolderLedger(harness().stateDir),
  );
  try {
    const ctx: PipelineContext = await pipeline.context();
    const prepared = await prepareInput(file, ctx);
    if ('unreadable' in prepared) throw new Error('unreadable');
    const refs = prepared.read.diagnostics.map((d) => new WeakRef(d));
    expect(refs.length).toBeGreaterThan(0);
    const held = () => {
      gc();
      return refs.filter((r) => r.deref() !== undefined).length;
    };
    let seen = false;
    const onProgress: NonNullable<PipelineContext['hooks']>['onProgress'] = (event) => {
      if (event.stage !== 'plan' || event.done !== 0 || seen) return;
      seen = true;
      atPlan(held);
    };
    const outcome = await processPrepared(prepared, { ...ctx, hooks: { onProgress }, keepJobs: false });
    expect(seen).toBe(true);
    return outcome;
  } finally {
    await pipeline.close();
  }
}

describe("a run's invalid jobs", () => {
  for (const windowed of [false, true])
    it(`hold none of their findings once check refused them${windowed ? ' (read a window at a time)' : ''}`, async () => {
      if (windowed) {
        windowedRead.fromBytes = 0;
        windowedRead.windowJobs = 7;
      }
      const jobs = 60;
      const file = await harness().write('orders.csv', orders(jobs, new Set([4, 31])));
      let atPlan = -1;
      const outcome = await run(file, (held) => {
        atPlan = held();
      });
      // Three findings an invalid job, each its own diagnostic: none is held any more.
      expect(atPlan).toBe(0);
      expect(outcome.status).toBe('invalid');
      const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
      expect(report.summary.byStatus).toMatchObject({ invalid: jobs - 2, 'not-submitted': 2 });
      expect(report.summary.errors).toBe((jobs - 2) * 3 + 2);
      const errors = await readFile(`${file}.errors.txt`, 'utf8');
      expect(errors.split('\n').filter((l) => l.includes('must be an integer')).length).toBe((jobs - 2) * 3);
    });
});
