import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SavedPlan, savedPlanText } from '../../src/pipeline/saved-plan.js';

const text = fc.string({ unit: 'binary', maxLength: 12 });
const job = fc.record({
  orderNumber: text,
  request: fc.stringMatching(/^[0-9a-f]{64}$/),
  estimate: fc.oneof(fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer()),
});
const plan: fc.Arbitrary<SavedPlan> = fc.record({
  planVersion: fc.constant(1 as const),
  htorderVersion: text,
  createdAt: text,
  account: text,
  currency: fc.oneof(fc.constant(null), text),
  inputs: fc.array(
    fc.record({ file: text, sha256: fc.stringMatching(/^[0-9a-f]{64}$/), jobs: fc.array(job, { maxLength: 6 }) }),
    { maxLength: 4 },
  ),
});

describe("a saved plan's text", () => {
  it('is JSON.stringify(plan, null, 2) and a newline, whatever the plan holds', () => {
    fc.assert(
      fc.property(plan, (p) => {
        expect([...savedPlanText(p)].join('')).toBe(`${JSON.stringify(p, null, 2)}\n`);
      }),
      { numRuns: 500 },
    );
  });

  it('comes in pieces no larger than one job of a plan of many', () => {
    const jobs = Array.from({ length: 10_000 }, (_, i) => ({
      orderNumber: `PO-${i}`,
      request: 'a'.repeat(64),
      estimate: i,
    }));
    const p: SavedPlan = {
      planVersion: 1,
      htorderVersion: '0',
      createdAt: 'now',
      account: 'acc',
      currency: 'USD',
      inputs: [{ file: '/f.csv', sha256: 'b'.repeat(64), jobs }],
    };
    const pieces = [...savedPlanText(p)];
    expect(Math.max(...pieces.map((s) => s.length))).toBeLessThan(400);
    expect(pieces.join('')).toBe(`${JSON.stringify(p, null, 2)}\n`);
  });
});
