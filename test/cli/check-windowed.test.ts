import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CheckOutcome,
  checkInput,
  checkProbe,
  checkRoute,
  humanSummary,
  WHOLE_CHECK_FINDINGS,
} from '../../src/cli/check-command.js';
import { checkDetails } from '../../src/cli/json-summary.js';
import type { Clock } from '../../src/core/clock.js';
import { WINDOWED_FROM_BYTES, windowedRead } from '../../src/manifest/load-manifest.js';
import type { JobResult } from '../../src/report/model.js';
import { bytesOf, csvText, sampleArb } from '../support/csv-samples.js';
import { expectNoTemporariesBeside, tempFiles } from '../support/temp-files.js';

/**
 * `check` of a big template CSV reads it a window at a time and writes its reports through the
 * report spool: the same three reports, byte for byte, and the same summaries as the whole
 * read's, for any template CSV; nothing left beside the input, whether check ends or fails; and
 * none of its jobs' results held once they are written.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const files = tempFiles('htorder-check-windowed-');
const clock: Clock = { now: () => Date.UTC(2026, 10, 30, 8) };
const REPORTS = ['.result.json', '.result.csv', '.errors.txt'];

afterEach(() => {
  windowedRead.fromBytes = WINDOWED_FROM_BYTES;
  windowedRead.windowJobs = undefined;
  checkRoute.wholeUpToFindings = WHOLE_CHECK_FINDINGS;
  checkProbe.spooled = undefined;
});

/**
 * The reports check wrote of `file` (undefined: not written), then removed; and what it says of
 * it. `windowJobs` undefined: read whole; else a big input of windows of so many jobs, read
 * windowed once its findings pass `wholeUpTo` (-1: at once).
 */
async function checked(file: string, windowJobs: number | undefined, wholeUpTo = -1) {
  windowedRead.fromBytes = windowJobs === undefined ? Number.POSITIVE_INFINITY : 0;
  windowedRead.windowJobs = windowJobs;
  checkRoute.wholeUpToFindings = wholeUpTo;
  let spooled = 0;
  checkProbe.spooled = () => spooled++;
  const outcome = await checkInput(file, { clock });
  const reports: Array<string | undefined> = [];
  for (const suffix of REPORTS) {
    reports.push(await readFile(`${file}${suffix}`, 'utf8').catch(() => undefined));
    await rm(`${file}${suffix}`, { force: true });
  }
  return { reports, said: said(outcome), spooled };
}

/** What check prints of an outcome: the human summary and the --json line's part. */
function said(outcome: CheckOutcome) {
  return {
    status: outcome.status,
    human: humanSummary(outcome),
    json: outcome.report === undefined ? undefined : checkDetails(outcome.report, outcome),
  };
}

/** Answers how many jobs the windowed check spooled (none where the whole read must do). */
async function expectSameAsWholeRead(file: string, windowJobs: number): Promise<number> {
  const whole = await checked(file, undefined);
  const windowed = await checked(file, windowJobs);
  expect(whole.spooled).toBe(0);
  expect({ ...windowed, spooled: 0 }).toEqual(whole);
  await expectNoTemporariesBeside(file);
  return windowed.spooled;
}

/** `n` orders of three lines; every line's quantity not a number in the orders `invalid` names. */
function orders(n: number, invalid: (i: number) => boolean): string {
  const rows = [
    'orderNumber,description,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity',
  ];
  for (let i = 0; i < n; i++)
    for (let k = 0; k < 3; k++) {
      const order = k === 0 ? `Order ${i},UPS Ground,Ana Ruiz,1 Main St,Austin,Texas,78701,United States` : ',,,,,,,';
      rows.push(`PO-${i},${order},Asset,A10001,${invalid(i) ? 'x' : String(10 + k)}`);
    }
  return `${rows.join('\n')}\n`;
}

describe('check of a template CSV read a window at a time', () => {
  it('writes the whole read’s reports and says what it says, for any template CSV', async () => {
    let n = 0;
    let windowed = 0;
    await fc.assert(
      fc.asyncProperty(sampleArb, fc.integer({ min: 1, max: 9 }), async (sample, windowJobs) => {
        const file = await files.write(`sample-${n++}.csv`, bytesOf(sample, csvText(sample)));
        if ((await expectSameAsWholeRead(file, windowJobs)) > 0) windowed++;
      }),
      { numRuns: 80 },
    );
    // Most samples have jobs: they are read windowed (the others by the whole read in both).
    expect(windowed).toBeGreaterThan(40);
  }, 90_000);

  it('writes the whole read’s reports of valid, invalid and mixed inputs, warnings among them', async () => {
    for (const [name, invalid] of [
      ['valid', () => false],
      ['invalid', () => true],
      ['mixed', (i: number) => i % 3 === 1],
    ] as const) {
      const file = await files.write(`${name}.csv`, orders(90, invalid));
      expect(await expectSameAsWholeRead(file, 7)).toBe(90);
    }
    // More findings of a code than the read keeps (the rest summed up on no job).
    const many = await files.write(
      'many.csv',
      orders(400, () => true),
    );
    expect(await expectSameAsWholeRead(many, 256)).toBe(400);
    // Spreadsheet damage: warnings on the jobs, and order numbers that collide across windows.
    const lines = ['orderNumber,code,quantity,postalCode,country,phone,deliveryMethod'];
    for (let r = 0; r < 40; r++)
      lines.push(`${['Café', 'Cafe\u0301', `SO-${r}`][r % 3]},A${r},${r % 4 ? 2 : 'x'},2134,US,1.61756E+10,UPSGND`);
    const damaged = await files.write('damaged.csv', `${lines.join('\n')}\n`);
    expect(await expectSameAsWholeRead(damaged, 3)).toBeGreaterThan(0);
  });

  it('holds none of its jobs’ results once they are written but the few its summaries quote', async () => {
    const jobs = 600;
    const file = await files.write(
      'held.csv',
      orders(jobs, () => true),
    );
    const results: Array<WeakRef<JobResult>> = [];
    checkProbe.spooled = (result) => results.push(new WeakRef(result));
    windowedRead.fromBytes = 0;
    windowedRead.windowJobs = 16;
    checkRoute.wholeUpToFindings = -1;
    const outcome = await checkInput(file, { clock });
    // Counted a turn of the event loop later: a WeakRef made in this turn keeps its target alive.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(results.length).toBe(jobs);
    const held = results.filter((r) => r.deref() !== undefined).length;
    // The outcome (still in use here) keeps the jobs the summaries quote: three errors a job,
    // so seven jobs give the first twenty.
    expect(outcome.report?.jobs.length).toBe(7);
    expect(held).toBe(7);
    expect(outcome.report?.summary.byStatus.invalid).toBe(jobs);
    const errors = await readFile(`${file}.errors.txt`, 'utf8');
    expect(errors.split('\n').filter((l) => l.includes('held.csv:')).length).toBe(jobs * 3);
  });

  it('leaves no temporary file beside its input when its reports cannot be written', async () => {
    const file = await files.write(
      'blocked.csv',
      orders(50, (i) => i % 2 === 0),
    );
    // A folder where result.csv goes: no report could replace it.
    await mkdir(`${file}.result.csv`);
    windowedRead.fromBytes = 0;
    windowedRead.windowJobs = 4;
    checkRoute.wholeUpToFindings = 10;
    // Named and left unprocessed (exit 2), as an input that cannot be read is.
    expect(await checkInput(file, { clock })).toMatchObject({
      status: 'unreadable',
      problem: expect.stringContaining(`its report ${file}.result.csv is a folder`),
    });
    await expectNoTemporariesBeside(file);
    expect((await readdir(dirname(file))).filter((f) => f.startsWith('blocked.csv.'))).toEqual([
      'blocked.csv.result.csv',
    ]);
  });
});

describe('check of a big template CSV: read whole, and windowed once its findings are many', () => {
  it('reads a valid big input, or one with few findings, whole, and one with more windowed: the same reports', async () => {
    const route = async (name: string, invalid: (i: number) => boolean, wholeUpTo: number) => {
      const file = await files.write(`${name}.csv`, orders(90, invalid));
      const whole = await checked(file, undefined);
      const big = await checked(file, 7, wholeUpTo);
      expect({ ...big, spooled: 0 }).toEqual(whole);
      await expectNoTemporariesBeside(file);
      return big.spooled;
    };
    // A valid big input costs what any input does: no job goes through the windowed route.
    expect(await route('valid', () => false, WHOLE_CHECK_FINDINGS)).toBe(0);
    // Ten faulty orders of three faulty lines: thirty findings, as many as it holds read whole.
    expect(await route('thirty', (i) => i < 10, 30)).toBe(0);
    // One more order: thirty-three, past it.
    expect(await route('thirty-three', (i) => i < 11, 30)).toBe(90);
    // The rules' findings count as the schema's do: a due date in the past on every order.
    const lines = [
      'orderNumber,dateDue,deliveryMethod,contactName,streetAddress,city,postalCode,country,code,quantity',
    ];
    for (let i = 0; i < 40; i++)
      lines.push(`PO-${i},2020-01-0${1 + (i % 9)},UPSGND,Ana,1 Main St,Austin,78701,US,A1,2`);
    const late = await files.write('late.csv', `${lines.join('\n')}\n`);
    const whole = await checked(late, undefined);
    expect(whole.reports[2]).toContain('late.csv:2:');
    const under = await checked(late, 7, 40);
    const over = await checked(late, 7, 39);
    expect([under.spooled, over.spooled]).toEqual([0, 40]);
    expect({ ...over, spooled: 0 }).toEqual(whole);
    expect({ ...under, spooled: 0 }).toEqual(whole);
  });

  it('leaves no temporary file beside its input when a big input read whole cannot be reported', async () => {
    const file = await files.write(
      'blocked-whole.csv',
      orders(50, (i) => i % 2 === 0),
    );
    await mkdir(`${file}.result.json`);
    windowedRead.fromBytes = 0;
    windowedRead.windowJobs = 4;
    expect(await checkInput(file, { clock })).toMatchObject({
      status: 'unreadable',
      problem: expect.stringContaining(`its report ${file}.result.json is a folder`),
    });
    await expectNoTemporariesBeside(file);
  });
});
