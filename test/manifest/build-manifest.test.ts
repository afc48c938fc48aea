import { describe, expect, it } from 'vitest';
import { buildManifest } from '../../src/manifest/build-manifest.js';
import type { RawDocument } from '../../src/manifest/model.js';

const raw = (doc: unknown): RawDocument => ({
  file: 'x.yaml',
  format: 'yaml',
  sha256: '',
  doc,
  sources: { locate: () => ({ file: 'x.yaml' }) },
  diagnostics: [],
});

describe('buildManifest', () => {
  it('without defaults, reuses the reader objects that need no change and copies the rest', () => {
    const plain = {
      orderNumber: 'A',
      deliveryAddress: { city: 'X' },
      items: [{ itemType: 'Asset', code: 'A1', quantity: 1 }],
    };
    const zeroSize = { itemType: 'Stock', code: 'S', sizeQuantities: { S: 2, M: 0 } };
    const withZero = {
      orderNumber: 'B',
      deliveryAddress: {},
      items: [{ itemType: 'Asset', code: 'A1', quantity: 1 }, zeroSize],
    };
    const noAddress = { orderNumber: 'C', items: [] };
    const m = buildManifest(raw({ version: 1, jobs: [plain, withZero, noAddress, 'junk'] }))!;
    expect(m.jobs[0]).toBe(plain);
    expect(m.jobs[1]).not.toBe(withZero);
    expect(m.jobs[1].items[0]).toBe(withZero.items[0]);
    expect(m.jobs[1].items[1]).toEqual({ itemType: 'Stock', code: 'S', sizeQuantities: { S: 2 } });
    expect(zeroSize.sizeQuantities).toEqual({ S: 2, M: 0 }); // the reader's object is not changed
    expect(m.jobs[2]).toEqual({ orderNumber: 'C', items: [], deliveryAddress: {} });
    expect(m.jobs[3]).toEqual({ deliveryAddress: {}, items: [] });
  });

  it('with defaults, merges into copies', () => {
    const job = { orderNumber: 'A', items: [{ itemType: 'Asset', code: 'A1', quantity: 1 }] };
    const m = buildManifest(raw({ version: 1, defaults: { deliveryAddress: { city: 'X' } }, jobs: [job] }))!;
    expect(m.jobs[0]).not.toBe(job);
    expect(m.jobs[0]).toEqual({ deliveryAddress: { city: 'X' }, orderNumber: 'A', items: job.items });
    expect(job).not.toHaveProperty('deliveryAddress');
  });
});
