import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteOutput } from '../../src/report/byte-output.js';
import type { ItemResult, ReportError } from '../../src/report/model.js';
import { itemsJson } from '../../src/report/write-result-json.js';

/**
 * result.json's items are written as bytes by hand (itemsJson): they must be exactly what
 * JSON.stringify(report, null, 2) writes for them, at the depth of a job's `items` key (six
 * spaces in), for any values the model's types allow and a few they do not.
 */
const anyString = fc.oneof(
  fc.constantFrom('Asset', 'A10001', 'valid', ''),
  fc.string({ unit: 'binary' }), // quotes, backslashes, control characters, lone surrogates
  fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u2028', 'é', '😀', '\u0000') }),
);
const anyNumber = fc.oneof(
  fc.nat(),
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, 0.1, 1e21, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY),
);
const error: fc.Arbitrary<ReportError> = fc.record({
  code: anyString,
  message: anyString,
  field: fc.option(anyString),
  source: fc.constant(null),
});
const item: fc.Arbitrary<ItemResult> = fc.record({
  index: anyNumber,
  source: fc.oneof(
    fc.constant(null),
    fc.record({ row: anyNumber }),
    fc.record({ row: fc.nat(), columnName: anyString }),
    fc.record({ line: fc.nat(), column: fc.nat() }),
    fc.record({ row: fc.nat(), file: anyString }),
  ),
  itemType: fc.option(anyString),
  code: fc.option(anyString),
  quantity: fc.option(anyNumber),
  status: fc.constantFrom('valid', 'invalid', 'submitted', 'skipped'),
  newAssetSku: fc.option(anyString),
  needsArtworkToBeUploaded: fc.option(fc.boolean()),
  errors: fc.oneof(fc.constant([]), fc.array(error, { maxLength: 2 })),
}) as fc.Arbitrary<ItemResult>;

function written(items: ItemResult[]): string {
  const out = new ByteOutput(16);
  itemsJson(items, out);
  return out.flush().toString('utf8');
}

const expected = (items: ItemResult[]): string => JSON.stringify(items, null, 2).replace(/\n/g, `\n${' '.repeat(6)}`);

describe('result.json items written as bytes', () => {
  it('are exactly what JSON.stringify writes at that depth', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 4 }), (items) => {
        expect(written(items)).toBe(expected(items));
      }),
      { numRuns: 500 },
    );
  });

  it('past the strings it remembers (more distinct codes than it keeps)', () => {
    const items: ItemResult[] = [];
    for (let k = 0; k < 6000; k++)
      items.push({
        index: k,
        source: { row: k + 2 },
        itemType: 'Asset',
        code: `CODE-"${k}"-é`,
        quantity: k % 3 === 0 ? null : k,
        status: 'valid',
        newAssetSku: null,
        needsArtworkToBeUploaded: null,
        errors: [],
      });
    expect(written(items)).toBe(expected(items));
    expect(written(items)).toBe(expected(items)); // the second time, from what was remembered
  });
});
