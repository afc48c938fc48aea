import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openApiSession } from '../../src/app/api-session.js';
import { pipelineOver } from '../../src/app/pipeline-context.js';
import type { Clock } from '../../src/core/clock.js';
import { type InputOutcome, processInput } from '../../src/pipeline/process-input.js';
import type { ResultReport } from '../../src/report/model.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';
import { ADDRESS, ITEMS } from '../support/yaml-manifests.js';

/**
 * Night after night, in one test: htorder's calendar clock is injected and moved a night at a
 * time (no sleeps, the sandbox untouched), and every rule that reads the date follows it — the
 * suspected-duplicate window, the daily budget's day, the reports' and the ledger's times.
 */

const HOUR = 3_600_000;
const NIGHT = 24 * HOUR;
/** 02:00 UTC: a nightly cron's hour. */
const NIGHT_1 = Date.parse('2026-11-27T02:00:00Z');

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** A clock a test moves by hand. */
function handClock(at: number): Clock & { at: number } {
  return {
    at,
    now() {
      return this.at;
    },
  };
}

/** `run` (or `plan`) of one input through the app's own wiring, with `clock` as the session's calendar clock. */
async function runAt(
  clock: Clock,
  file: string,
  opts: { command?: 'plan' | 'run'; env?: Record<string, string> } = {},
): Promise<InputOutcome & { report: ResultReport; account: string }> {
  const command = opts.command ?? 'run';
  // The default window (12h): the harness turns it off for other tests.
  const env: Record<string, string> = { ...h.env(), HTORDER_DUPLICATE_WINDOW: '12h', ...opts.env };
  const session = await openApiSession({ flags: {}, env, cwd: h.workDir, stderr: sink().stream });
  const pipeline = pipelineOver({ ...session, clock }, { command, cwd: h.workDir, env }, new FolderLedger(h.stateDir));
  try {
    const ctx = await pipeline.context();
    const outcome = await processInput(file, ctx);
    if (!outcome.report) throw new Error(`${file}: ${outcome.problem ?? 'no report'}`);
    return { ...outcome, report: outcome.report, account: ctx.account };
  } finally {
    await pipeline.close();
  }
}

/** The shop's own replenishment, the same every night under a new order number. */
const REORDER_TO = ADDRESS;
/** A new customer somewhere else. */
const NEW_CUSTOMER = ADDRESS.replace('Ana Ruiz', 'Bo Chen').replace('1 Main St', '77 Elm Ave');

function orders(jobs: { orderNumber: string; address: string }[]): string {
  const job = (j: { orderNumber: string; address: string }) =>
    `  - orderNumber: ${j.orderNumber}\n${j.address}    items:\n${ITEMS.reorder}`;
  return `version: 1\njobs:\n${jobs.map(job).join('')}`;
}

const statuses = (r: ResultReport) => r.jobs.map((j) => [j.orderNumber, j.status]);

describe('nights played by moving the injected clock', () => {
  it('a recurring reorder flows on nights 1–3; a re-send an hour later waits alone, its file’s new customer is sent', async () => {
    const clock = handClock(NIGHT_1);
    const night1 = await h.write('night-1.yaml', orders([{ orderNumber: 'SHOP-1001', address: REORDER_TO }]));
    const first = await runAt(clock, night1);
    expect(statuses(first.report)).toEqual([['SHOP-1001', 'submitted']]);
    expect(first.status).toBe('ok');
    // The report and the ledger read the injected clock.
    expect(first.report.startedAt.slice(0, 10)).toBe('2026-11-27');
    expect(first.report.finishedAt?.slice(0, 10)).toBe('2026-11-27');

    // An hour later the export is sent again under new numbers, with one new customer's order.
    clock.at = NIGHT_1 + HOUR;
    const resend = await h.write(
      'night-1-again.yaml',
      orders([
        { orderNumber: 'SHOP-1001-R', address: REORDER_TO },
        { orderNumber: 'NEW-2001', address: NEW_CUSTOMER },
      ]),
    );
    // plan says what run does: the re-send waits with its reason, the new customer's order is valid.
    const planned = await runAt(clock, resend, { command: 'plan' });
    expect(statuses(planned.report)).toEqual([
      ['SHOP-1001-R', 'awaiting-approval'],
      ['NEW-2001', 'valid'],
    ]);
    const again = await runAt(clock, resend);
    expect(again.status).toBe('held');
    expect(statuses(again.report)).toEqual([
      ['SHOP-1001-R', 'awaiting-approval'],
      ['NEW-2001', 'submitted'],
    ]);
    const reason = again.report.jobs[0]?.errors[0];
    expect(reason?.code).toBe('approval.duplicate');
    expect(reason?.message).toContain('within the last 12h');

    // Nights 2 and 3: the same replenishment under the night's number flows.
    let account = '';
    for (const [night, orderNumber] of [
      [2, 'SHOP-1002'],
      [3, 'SHOP-1003'],
    ] as const) {
      clock.at = NIGHT_1 + (night - 1) * NIGHT;
      const file = await h.write(`night-${night}.yaml`, orders([{ orderNumber, address: REORDER_TO }]));
      const out = await runAt(clock, file);
      account = out.account;
      expect(statuses(out.report), `night ${night}`).toEqual([[orderNumber, 'submitted']]);
      expect(out.report.finishedAt?.slice(0, 10)).toBe(`2026-11-${26 + night}`);
    }
    const created = (await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort();
    expect(created).toEqual(['NEW-2001', 'SHOP-1001', 'SHOP-1002', 'SHOP-1003']);

    // The ledger's times are the injected clock's too.
    const entry = await new FolderLedger(h.stateDir).read({ account, orderNumber: 'SHOP-1003' });
    expect(entry?.intentAt.slice(0, 16)).toBe('2026-11-29T02:00');
    expect(entry?.outcomeAt?.slice(0, 16)).toBe('2026-11-29T02:00');
  });

  it('the daily budget counts the injected clock’s day: what waits for lack of budget tonight fits tomorrow', async () => {
    const clock = handClock(NIGHT_1);
    const env = { HTORDER_MAX_DAILY_COST: '200' };
    // Each reorder of 50 is estimated at 150.00: one fits in a day's 200, two do not.
    const a = await h.write('a.yaml', orders([{ orderNumber: 'DAY-1', address: REORDER_TO }]));
    expect((await runAt(clock, a, { env })).status).toBe('ok');
    const b = await h.write('b.yaml', orders([{ orderNumber: 'DAY-2', address: NEW_CUSTOMER }]));
    clock.at = NIGHT_1 + 2 * HOUR;
    const tonight = await runAt(clock, b, { env });
    expect(statuses(tonight.report)).toEqual([['DAY-2', 'awaiting-approval']]);
    expect(tonight.report.jobs[0]?.errors[0]?.code).toBe('approval.daily-cost');
    clock.at = NIGHT_1 + NIGHT;
    expect(statuses((await runAt(clock, b, { env })).report)).toEqual([['DAY-2', 'submitted']]);
  });

  it('the jobs sent beside a held duplicate count in the day’s budget', async () => {
    const clock = handClock(NIGHT_1);
    const env = { HTORDER_MAX_DAILY_COST: '300' };
    const a = await h.write('a.yaml', orders([{ orderNumber: 'R-1', address: REORDER_TO }]));
    expect((await runAt(clock, a, { env })).status).toBe('ok');
    clock.at = NIGHT_1 + HOUR;
    const b = await h.write(
      'b.yaml',
      orders([
        { orderNumber: 'R-1-AGAIN', address: REORDER_TO },
        { orderNumber: 'NEW-1', address: NEW_CUSTOMER },
      ]),
    );
    expect(statuses((await runAt(clock, b, { env })).report)).toEqual([
      ['R-1-AGAIN', 'awaiting-approval'],
      ['NEW-1', 'submitted'],
    ]);
    // 150 + 150 counted: a third order of 150 does not fit today.
    const c = await h.write(
      'c.yaml',
      orders([{ orderNumber: 'NEW-2', address: NEW_CUSTOMER.replace('Bo Chen', 'Cy Day') }]),
    );
    const third = await runAt(clock, c, { env });
    expect(statuses(third.report)).toEqual([['NEW-2', 'awaiting-approval']]);
    expect(third.report.jobs[0]?.errors[0]?.code).toBe('approval.daily-cost');
  });
});
