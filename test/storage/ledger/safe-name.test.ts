import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeName, shardOf } from '../../../src/storage/ledger/safe-name.js';

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

describe('ledger names', () => {
  it('are the readable prefix and the SHA-256 of the string, however often and in whatever order asked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('A-1', '../x', '')), {
          maxLength: 40,
        }),
        (values) => {
          for (const v of [...values, ...values.reverse()]) {
            expect(safeName(v).endsWith(`-${sha256(v).slice(0, 16)}`)).toBe(true);
            expect(shardOf(v, 3)).toBe(sha256(v).slice(0, 3));
          }
        },
      ),
      { numRuns: 200 },
    );
    // More distinct strings than the names kept: the hashes stay right after the table starts over.
    for (let i = 0; i < 10_000; i++) expect(shardOf(`order ${i}`, 2)).toBe(sha256(`order ${i}`).slice(0, 2));
    expect(safeName('order 1')).toBe(`order_1-${sha256('order 1').slice(0, 16)}`);
  });
});
