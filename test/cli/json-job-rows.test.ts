import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonJobRows } from '../../src/cli/json-job-rows.js';
import { jsonSummary, type Outcome, pipelineDetails, pipelineHead, pipelineJob } from '../../src/cli/json-summary.js';
import type { InputOutcome } from '../../src/pipeline/process-input.js';
import type { ResultReport } from '../../src/report/model.js';

/** A stream that takes its writes slowly (each acknowledged a turn later), so `write` waits for `drain`. */
function slowSink(): { out: Writable; text: () => Promise<string> } {
  const chunks: Buffer[] = [];
  const out = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      setImmediate(done);
    },
  });
  // What was written, once the stream has taken all of it.
  const text = async () => {
    out.end();
    await finished(out);
    return Buffer.concat(chunks).toString('utf8');
  };
  return { out, text };
}

const text = fc.string({ unit: 'binary', maxLength: 12 });
const job = fc.record({
  orderNumber: text,
  status: fc.constantFrom('submitted', 'invalid', 'awaiting-approval'),
  jobNumber: fc.option(text),
  dateDue: fc.option(text),
  estimatedCost: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })),
  totalJobCost: fc.option(fc.integer()),
  errors: fc.array(fc.constant({}), { maxLength: 2 }),
  warnings: fc.array(fc.constant({}), { maxLength: 2 }),
  items: fc.array(fc.record({ errors: fc.array(fc.constant({}), { maxLength: 2 }) }), { maxLength: 3 }),
});
const outcome = fc.oneof(
  fc.record({ file: text, status: fc.constant('unreadable'), problem: text }),
  fc.record({
    file: text,
    status: fc.constantFrom('done', 'invalid', 'held', 'unavailable'),
    report: fc.record({ summary: fc.record({ jobs: fc.nat() }), jobs: fc.array(job, { maxLength: 400 }) }),
    reports: fc.record({ json: text, csv: text }),
  }),
);

describe('--json rows kept in a file', () => {
  const tmp = process.env.TMPDIR;
  afterEach(() => {
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
  });

  it('writes exactly the line the summary held whole wrote, and leaves no file behind', async () => {
    process.env.TMPDIR = await mkdtemp(join(tmpdir(), 'htorder-json-rows-'));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('run', 'plan'),
        fc.array(outcome, { maxLength: 4 }),
        fc.array(text, { maxLength: 2 }),
        fc.integer({ min: 0, max: 5 }),
        async (command, given, skipped, exitCode) => {
          const outcomes = given as unknown as (Outcome & InputOutcome)[];
          const whole = `${JSON.stringify(jsonSummary(command, outcomes, exitCode, pipelineDetails, skipped))}\n`;
          const rows = await JsonJobRows.open();
          try {
            for (const o of outcomes) await rows.add(o, pipelineJob);
            const sink = slowSink();
            await rows.write(sink.out, jsonSummary(command, outcomes, exitCode, pipelineHead, skipped), outcomes);
            expect(await sink.text()).toBe(whole);
          } finally {
            await rows.close();
          }
          expect(await readdir(process.env.TMPDIR as string)).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads each job once, while it can be read, and not at the end', async () => {
    // A spooled report's jobs throw once let go (spooled-report.ts): the rows must not need them then.
    let readable = true;
    const jobs = Array.from({ length: 3000 }, (_, j) => ({
      orderNumber: `SO-${j}`,
      status: 'submitted',
      jobNumber: `J${j}`,
      dateDue: null,
      estimatedCost: 1.5,
      totalJobCost: null,
      errors: [],
      warnings: [],
      items: [],
    }));
    const view = new Proxy(jobs, {
      get(target, key, receiver) {
        if (!readable && key !== 'length') throw new Error('the jobs are no longer held');
        return Reflect.get(target, key, receiver);
      },
    });
    const o = {
      file: 'a.csv',
      status: 'done',
      report: { summary: { jobs: 3000 }, jobs: view } as unknown as ResultReport,
    };
    const outcomes = [o] as unknown as (Outcome & InputOutcome)[];
    const rows = await JsonJobRows.open();
    try {
      await rows.add(outcomes[0] as Outcome, pipelineJob);
      const expected = JSON.stringify(jsonSummary('run', outcomes, 0, pipelineDetails));
      readable = false;
      const sink = slowSink();
      await rows.write(sink.out, jsonSummary('run', outcomes, 0, pipelineHead), outcomes);
      expect(await sink.text()).toBe(`${expected}\n`);
    } finally {
      await rows.close();
    }
  });

  it('stops writing to a reader that went away', async () => {
    const rows = await JsonJobRows.open();
    const jobs = Array.from({ length: 20_000 }, (_, j) => ({
      orderNumber: `SO-${j}`,
      errors: [],
      warnings: [],
      items: [],
    }));
    const o = { file: 'a.csv', status: 'done', report: { summary: {}, jobs } as unknown as ResultReport };
    const outcomes = [o] as unknown as (Outcome & InputOutcome)[];
    try {
      await rows.add(outcomes[0] as Outcome, pipelineJob);
      const sink = slowSink();
      setImmediate(() => sink.out.destroy());
      await rows.write(sink.out, jsonSummary('run', outcomes, 0, pipelineHead), outcomes);
      expect(sink.out.destroyed).toBe(true);
    } finally {
      await rows.close();
    }
  });
});
