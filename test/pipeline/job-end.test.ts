import { setFlagsFromString } from 'node:v8';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type JobEnd, JobEnds, jobEnd } from '../../src/pipeline/job-end.js';
import { type JobState, STAGE_OUTCOMES } from '../../src/pipeline/job-state.js';
import { jobStatus } from '../../src/pipeline/job-status.js';
import { requestOf } from '../../src/pipeline/saved-plan.js';

setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
const state: fc.Arbitrary<JobState> = fc
  .record({
    index: fc.nat({ max: 10_000_000 }),
    orderNumber: fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })),
    outcome: fc.constantFrom(...STAGE_OUTCOMES),
    unavailable: fc.boolean(),
    approved: fc.boolean(),
    recorded: fc.boolean(),
    resolved: fc.option(
      fc.record({
        request: hex64,
        total: fc.option(fc.double(), { nil: undefined }),
        currency: fc.option(fc.constantFrom('USD', 'CAD'), { nil: undefined }),
      }),
      { nil: undefined },
    ),
  })
  .map(
    (s) =>
      ({
        index: s.index,
        orderNumber: s.orderNumber,
        hash: 'h',
        outcome: s.outcome,
        diagnostics: [],
        unavailable: s.unavailable,
        ...(s.approved ? { approval: {} } : {}),
        ...(s.recorded ? { ledger: { outcome: 'found', entry: {} } } : {}),
        ...(s.resolved
          ? {
              resolved: {
                kept: true,
                orderNumber: s.orderNumber,
                jobIndex: s.index,
                request: s.resolved.request,
                estimate: { total: s.resolved.total, currency: s.resolved.currency },
              },
            }
          : {}),
      }) as unknown as JobState,
  );

describe("a job's end record", () => {
  it('reads back the outcome, flags, currency and planned request (of a valid job) the state had', () => {
    fc.assert(
      fc.property(state, fc.boolean(), (job, keepRequest) => {
        const end = jobEnd(job, keepRequest);
        const resolved = job.resolved;
        expect(end.index).toBe(job.index);
        expect(end.orderNumber).toBe(job.orderNumber);
        expect(end.outcome).toBe(job.outcome);
        expect(end.unavailable).toBe(job.unavailable);
        expect(end.approved).toBe(job.approval !== undefined);
        expect(end.recorded).toBe(job.ledger?.entry !== undefined);
        expect(end.currency).toBe(resolved?.estimate.currency);
        // A saved plan holds the valid jobs only: a job that ends otherwise keeps no request.
        expect(end.planned).toEqual(
          keepRequest && resolved && jobStatus(job.outcome) === 'valid'
            ? {
                orderNumber: resolved.orderNumber,
                request: requestOf(resolved),
                estimate: resolved.estimate.total ?? null,
              }
            : undefined,
        );
      }),
      { numRuns: 300 },
    );
  });

  it("is of one hidden class for every job a run ends, whatever the job's outcome", () => {
    const ends = Array.from({ length: 300 }, (_, i) =>
      jobEnd(
        {
          index: i,
          orderNumber: `PO-${i}`,
          hash: 'h',
          outcome: STAGE_OUTCOMES[i % STAGE_OUTCOMES.length],
          diagnostics: [],
          unavailable: i % 3 === 0,
          ...(i % 2 ? { approval: {} } : {}),
          ...(i % 5 ? { resolved: { kept: true, request: 'a', estimate: { currency: 'USD' } } } : {}),
        } as unknown as JobState,
        false,
      ),
    );
    expect(ends.every((end, k) => k === 0 || haveSameMap(ends[k - 1] as object, end))).toBe(true);
  });

  it("kept in an input's columns, reads back as the record each job's state gave, in manifest order", () => {
    const plain = (end: JobEnd | undefined) =>
      end && {
        index: end.index,
        orderNumber: end.orderNumber,
        outcome: end.outcome,
        unavailable: end.unavailable,
        approved: end.approved,
        recorded: end.recorded,
        currency: end.currency,
        planned: end.planned,
      };
    fc.assert(
      fc.property(
        fc.array(state, { minLength: 1, maxLength: 60 }),
        fc.boolean(),
        fc.nat(),
        (given, keepRequest, seed) => {
          // Each state in its own place, ended in a shuffled order, as runners end them.
          const states = given.map((job, i) => ({ ...job, index: i, orderNumber: job.orderNumber }) as JobState);
          const order = states.map((_, i) => i).sort((a, b) => ((a * 31 + seed) % 17) - ((b * 31 + seed) % 17));
          // The input's order numbers: the same as the states' (read from there), another, or none.
          const names =
            seed % 3 === 0
              ? (i: number) => states[i].orderNumber
              : seed % 3 === 1
                ? (i: number) => (i % 2 ? states[i].orderNumber : `other-${i}`)
                : undefined;
          const ends = new JobEnds(states.length, names);
          for (const [n, i] of order.entries()) {
            expect(ends.at(i)).toBeUndefined();
            ends.set(states[i], keepRequest);
            if (n === 0 && states.length > 1) expect(() => [...ends]).toThrow(/has not ended/);
          }
          const want = states.map((job) => plain(jobEnd(job, keepRequest)));
          expect([...ends].map(plain)).toEqual(want);
          expect(states.map((_, i) => plain(ends.at(i)))).toEqual(want);
          expect(ends.filter((e) => e.approved).map(plain)).toEqual(want.filter((e) => e?.approved));
          expect(ends.some((e) => e.recorded)).toBe(want.some((e) => e?.recorded));
          expect(ends.every((e) => e.unavailable)).toBe(want.every((e) => e?.unavailable));
          expect(plain(ends.find((e) => e.currency !== undefined))).toEqual(
            want.find((e) => e?.currency !== undefined),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds order numbers of any length and characters, past its first buffer', () => {
    const n = 5_000;
    const ends = new JobEnds(n);
    const name = (i: number) => (i % 3 === 0 ? `Ä-${i}-${'x'.repeat(i % 700)}` : i % 3 === 1 ? `订单-${i}\ud800` : '');
    for (let i = n - 1; i >= 0; i--)
      ends.set(
        {
          index: i,
          orderNumber: name(i),
          outcome: 'created',
          diagnostics: [],
          unavailable: false,
        } as unknown as JobState,
        false,
      );
    expect([...ends].map((e) => e.orderNumber)).toEqual(Array.from({ length: n }, (_, i) => name(i)));
  });
});
