import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, jobHash } from '../../src/pipeline/job-hash.js';
import type { ManifestJob } from '../../src/manifest/model.js';

const job: ManifestJob = {
  orderNumber: 'PO-1',
  deliveryAddress: { deliveryMethod: 'UPS Ground', city: 'Austin' },
  items: [{ itemType: 'Asset', code: 'A10001', quantity: 5 }],
};

describe('jobHash', () => {
  it('ignores key order and undefined values', () => {
    const reordered: ManifestJob = {
      items: [{ quantity: 5, code: 'A10001', itemType: 'Asset' }],
      deliveryAddress: { city: 'Austin', deliveryMethod: 'UPS Ground' },
      orderNumber: 'PO-1',
      description: undefined,
    };
    expect(jobHash(reordered)).toBe(jobHash(job));
  });

  it('changes when an order detail changes, not when cancel is added', () => {
    expect(jobHash({ ...job, items: [{ ...job.items[0]!, quantity: 6 }] })).not.toBe(jobHash(job));
    expect(jobHash({ ...job, cancel: true })).toBe(jobHash(job));
  });

  it('keeps array order significant (the API adds lines in the order supplied)', () => {
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('gives the fingerprints the ledger already holds (the text never changes)', () => {
    const kept = {
      orderNumber: 'PO-1',
      description: 'x',
      deliveryAddress: { deliveryMethod: 'UPS Ground', city: 'Austin', postalCode: '78701' },
      items: [
        { itemType: 'Asset', code: 'A10001', quantity: 5 },
        { itemType: 'Stock', code: 'GD5000', variantCode: 'GD5000-BLK', sizeQuantities: { S: 1, M: 2, ü: 3 } },
      ],
      comments: null,
      tags: ['b', 'a'],
      nested: { z: [{ y: 1, x: undefined }], a: true },
    } as unknown as ManifestJob;
    // Computed by the first implementation (entries, filter, sort, map, join).
    expect(jobHash(kept)).toBe('010b4895db1b2df147e6d748a882b76aeb4271355a964de401a91672f039c060');
  });

  it('writes the same text as the first implementation for any JSON-like value', () => {
    /** The first implementation, kept as the reference. */
    const first = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(first).join(',')}]`;
      if (value !== null && typeof value === 'object') {
        const entries = Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${first(v)}`).join(',')}}`;
      }
      return JSON.stringify(value);
    };
    const key = fc.string({ unit: fc.constantFrom('a', 'B', 'é', '1', '"', '\\', '_', 'ü', '😀'), maxLength: 4 });
    const value = fc.letrec((tie) => ({
      any: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(null, undefined, true, false, 0, -1.5, 1e21, Number.NaN),
        fc.string(),
        fc.integer(),
        fc.array(tie('any'), { maxLength: 4 }),
        fc.sparseArray(tie('any'), { maxLength: 4 }),
        fc.dictionary(key, tie('any'), { maxKeys: 5 }),
      ),
    })).any;
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(first(v));
      }),
      { numRuns: 500 },
    );
  });
});
