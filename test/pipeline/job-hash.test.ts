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
});
