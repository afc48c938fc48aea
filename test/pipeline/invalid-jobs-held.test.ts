import { readFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { openApiSession } from '../../src/app/api-session.js';
import { readWindowed, windowProbe } from '../../src/manifest/csv/windowed-read.js';
import type { Diagnostic, JobFindings } from '../../src/manifest/model.js';
import { pipelineOver } from '../../src/app/pipeline-context.js';
import { windowedRead } from '../../src/manifest/load-manifest.js';
import { type PipelineContext, prepareInput, processPrepared } from '../../src/pipeline/process-input.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { windowedHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';

/**
 * A job check refused goes through no stage: a run ends it before any other job starts, and
 * what its findings were made of is let go then, not held until the input's reports are
 * written. Counted by the read's own diagnostics, each watched by a WeakRef across a full
 * garbage collection, at the moment the first valid job would start. A windowed read holds
 * none of a window's findings once the window is checked: they wait on disk until the run
 * takes them, a window at a time.
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

/**
 * `run` of `file` in this process; `atPlan`: how many of the findings the read made (and a
 * windowed read's report took back) are held once the jobs check passed are about to start.
 */
async function run(file: string) {
  const env = { ...harness().env(), HTORDER_CONCURRENCY: '1' };
  const session = await openApiSession({ flags: {}, env, cwd: harness().workDir, stderr: sink().stream });
  const pipeline = pipelineOver(
    session,
    { command: 'run', cwd: harness().workDir, env },
    new FolderLedger(harness().stateDir),
  );
  try {
    const ctx: PipelineContext = await pipeline.context();
    // Every finding the read makes, and every one the report takes back from a windowed read's.
    const refs: Array<WeakRef<Diagnostic>> = [];
    const watch = (findings: Iterable<Diagnostic>) => {
      for (const d of findings) refs.push(new WeakRef(d));
    };
    windowProbe.checked = watch;
    const prepared = await prepareInput(file, ctx).finally(() => {
      windowProbe.checked = undefined;
    });
    if ('unreadable' in prepared) throw new Error('unreadable');
    watch(prepared.read.diagnostics);
    const spilled = prepared.read.jobFindings;
    if (spilled !== undefined) prepared.read.jobFindings = watched(spilled, watch);
    expect(refs.length).toBeGreaterThan(0);
    // Counted a turn of the event loop later: a WeakRef made in this turn (a window taken back
    // while jobs were ended) keeps its target alive until the turn ends.
    let counted: Promise<number> | undefined;
    let done = false;
    const held = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      expect(done).toBe(false);
      gc();
      return refs.filter((r) => r.deref() !== undefined).length;
    };
    const onProgress: NonNullable<PipelineContext['hooks']>['onProgress'] = (event) => {
      if (event.stage !== 'plan' || event.done !== 0 || counted !== undefined) return;
      counted = held();
    };
    const outcome = await processPrepared(prepared, { ...ctx, hooks: { onProgress }, keepJobs: false });
    done = true;
    expect(counted).toBeDefined();
    return { outcome, atPlan: await counted };
  } finally {
    await pipeline.close();
  }
}

/** `findings`, each window taken back watched by `watch`. */
function watched(findings: JobFindings, watch: (findings: Iterable<Diagnostic>) => void): JobFindings {
  return {
    refuses: (j) => findings.refuses(j),
    take: (j) => {
      const taken = findings.take(j);
      for (const list of taken?.values() ?? []) watch(list);
      return taken;
    },
    close: () => findings.close(),
  };
}

describe('a windowed read of invalid jobs', () => {
  it("holds no window's findings once it is checked, nor any once the read is done", async () => {
    const file = await harness().write('orders.csv', orders(60, new Set()));
    const windows: Array<Array<WeakRef<Diagnostic>>> = [];
    const held = () => {
      gc();
      return windows.flat().filter((r) => r.deref() !== undefined).length;
    };
    // Per window: how many findings of the windows checked before it are still held.
    const earlier: number[] = [];
    windowProbe.checked = (findings) => {
      earlier.push(held());
      windows.push(findings.map((d) => new WeakRef(d)));
    };
    const read = await readWindowed(file, undefined, 7).finally(() => {
      windowProbe.checked = undefined;
    });
    try {
      expect(read).toBeDefined();
      // Three findings a job, nine windows of seven jobs.
      expect(windows.flat().length).toBe(180);
      expect(earlier).toEqual(new Array(9).fill(0));
      expect(held()).toBe(0);
      expect(read?.jobFindings.refuses(59)).toBe(true);
      expect(read?.jobFindings.take(59)?.get(59)?.length).toBe(3);
    } finally {
      read?.close();
    }
  });
});

describe("a run's invalid jobs", () => {
  for (const windowed of [false, true])
    it(`hold none of their findings once check refused them${windowed ? ' (read a window at a time)' : ''}`, async () => {
      if (windowed) {
        windowedRead.fromBytes = 0;
        windowedRead.windowJobs = 7;
      }
      const jobs = 60;
      const file = await harness().write('orders.csv', orders(jobs, new Set([4, 31])));
      const { outcome, atPlan } = await run(file);
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
