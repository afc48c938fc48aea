import { createRequire } from 'node:module';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { manifestSchema } from '../../../src/manifest/schema/manifest-schema.js';
import { MANIFEST_AJV_OPTIONS, STANDALONE_FILE, schemaStamp } from '../../../src/manifest/schema/manifest-validator.js';

/**
 * `npm run build` writes the manifest validator as ajv standalone code into dist (so commands
 * start without compiling the schema). It must be the current schema's, stamped as such, and
 * judge documents exactly as the schema compiled at run time does.
 */
const built = createRequire(import.meta.url)(`../../../dist/manifest/schema/${STANDALONE_FILE}`) as {
  validate: ValidateFunction;
  stamp: string;
};
const compiled = new Ajv2020(MANIFEST_AJV_OPTIONS).compile(manifestSchema);

const DOCS: unknown[] = [
  { version: 1, jobs: [{ orderNumber: 'PO-1', items: [{ itemType: 'Asset', code: 'A10001', quantity: 5 }] }] },
  { version: 2, jobs: [] },
  { version: 1, jobs: [{ orderNumber: 7, items: [{ itemType: 'Asset', quantity: -1, CustomerReference: 'x' }] }] },
  {
    version: 1,
    defaults: { deliveryAddress: { deliveryMethod: 5 } },
    jobs: [{ orderNumber: 'PO-2', dateDue: 'soon', items: [{ itemType: 'PriceCode', code: 'X', quantity: 1 }] }],
  },
  {
    version: 1,
    jobs: [{ orderNumber: 'PO-3', items: [{ itemType: 'Stock', code: 'GD5000', sizeQuantities: { M: 'a' } }] }],
  },
  'not a manifest',
];

describe('the validator generated at build time', () => {
  it('is stamped with the schema on disk', () => {
    expect(built.stamp).toBe(schemaStamp(manifestSchema));
  });

  it('gives the same verdict and the same errors as the schema compiled at run time', () => {
    let invalid = 0;
    for (const doc of DOCS) {
      const ok = built.validate(doc);
      expect(ok).toBe(compiled(doc));
      expect(built.validate.errors ?? null).toEqual(compiled.errors ?? null);
      if (!ok) invalid++;
    }
    expect(invalid).toBe(DOCS.length - 1);
  });

  it('a stamp of another schema is not this one', () => {
    expect(schemaStamp({ ...manifestSchema, title: 'changed' })).not.toBe(built.stamp);
  });
});
