import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { manifestSchema } from '../../../src/manifest/schema/manifest-schema.js';
import { schemaStamp } from '../../../src/core/standalone-validator.js';
import {
  MANIFEST_AJV_OPTIONS,
  prebuilt,
  STANDALONE_FILE,
  validateManifest,
} from '../../../src/manifest/schema/manifest-validator.js';
import { DIST, requireDist } from '../../support/dist.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * `npm run build` writes the manifest validator as ajv standalone code into dist (so commands
 * start without compiling the schema). It must be the current schema's, taken at run time, and
 * judge documents exactly as the schema compiled at run time does; a missing or stale one must
 * give way to that compile. The built file exists only in dist/, so this reads it there.
 */
const BUILT = pathToFileURL(join(DIST, 'manifest/schema', STANDALONE_FILE));
const compiled = new Ajv2020(MANIFEST_AJV_OPTIONS).compile(manifestSchema);

const VALID = {
  version: 1,
  jobs: [{ orderNumber: 'PO-1', items: [{ itemType: 'Asset', code: 'A10001', quantity: 5 }] }],
};
const DOCS: unknown[] = [
  VALID,
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
  // Several faulty jobs and a faulty default: the built validator gathers their errors in place (build/standalone-validators.mjs).
  {
    version: 1,
    defaults: { deliveryAddress: { deliveryMethod: 5 }, mustDate: 'yes' },
    jobs: [
      { orderNumber: 'PO-4', items: [{ itemType: 'Asset', code: '', quantity: 0 }] },
      { orderNumber: 'PO-5', items: [{ itemType: 'Asset', code: 'A1', quantity: 1 }] },
      { orderNumber: 6, items: [{ itemType: 'Nope' }, { itemType: 'Stock', code: 'G' }] },
      { items: [] },
    ],
  },
  'not a manifest',
];

/** A generated validator file that says yes to everything, stamped as given. */
async function fakeStandalone(stamp: string): Promise<URL> {
  const file = join(await tempDirPerTest('htorder-standalone-'), STANDALONE_FILE);
  await writeFile(file, `module.exports = { validate: () => true, stamp: ${JSON.stringify(stamp)} };\n`);
  return pathToFileURL(file);
}

beforeAll(() => requireDist());

describe('the validator generated at build time', () => {
  it('is taken at run time: the build stamped it with the schema on disk', () => {
    const taken = prebuilt(BUILT);
    expect(taken).toBeDefined();
    // Not the compile: a different function from the one a fresh ajv makes.
    expect(taken).not.toBe(compiled);
  });

  it('gathers the errors of every job in one array, not a copy per faulty job', async () => {
    const code = await readFile(BUILT, 'utf8');
    expect(code).not.toContain('.concat(');
    expect(code).toContain('vErrors.push(validate');
  });

  it('gives the same verdict and the same errors as the schema compiled at run time', () => {
    const built = prebuilt(BUILT);
    if (built === undefined) throw new Error('the built validator was not taken');
    let invalid = 0;
    for (const doc of DOCS) {
      const ok = built(doc);
      expect(ok).toBe(compiled(doc));
      expect(built.errors ?? null).toEqual(compiled.errors ?? null);
      if (!ok) invalid++;
    }
    expect(invalid).toBe(DOCS.length - 1);
  });
});

describe('string lengths', () => {
  /** Every `minLength`/`maxLength` in the schema, with where it is. */
  function lengthLimits(node: unknown, at: string, out: string[]): string[] {
    if (node === null || typeof node !== 'object') return out;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'minLength' || key === 'maxLength') out.push(`${at}/${key}=${String(value)}`);
      else lengthLimits(value, `${at}/${key}`, out);
    }
    return out;
  }

  it('are only ever "at least 1", so counting UTF-16 units (unicode: false) judges as code points would', () => {
    const limits = lengthLimits(manifestSchema, '#', []);
    expect(limits.length).toBeGreaterThan(0);
    expect(limits.filter((l) => !l.endsWith('/minLength=1'))).toEqual([]);
    expect(MANIFEST_AJV_OPTIONS.unicode).toBe(false);
    // One astral character is one code point and two UTF-16 units: non-empty either way.
    const astral = {
      version: 1,
      jobs: [{ orderNumber: '\u{1F600}', items: [{ itemType: 'Asset', code: '\u{1F600}', quantity: 1 }] }],
    };
    expect(validateManifest(astral)).toBe(true);
    expect(
      validateManifest({
        version: 1,
        jobs: [{ orderNumber: '', items: [{ itemType: 'Asset', code: 'A', quantity: 1 }] }],
      }),
    ).toBe(false);
  });
});

describe('the run-time fallback', () => {
  it('a generated file stamped for the schema on disk is used as it is', async () => {
    const yes = prebuilt(await fakeStandalone(schemaStamp(manifestSchema)));
    expect(yes?.('not a manifest')).toBe(true);
  });

  it('a stale one (made from another schema) or none at all is not used', async () => {
    expect(prebuilt(await fakeStandalone(schemaStamp({ ...manifestSchema, title: 'changed' })))).toBeUndefined();
    expect(prebuilt(pathToFileURL(join(await tempDirPerTest('htorder-standalone-'), STANDALONE_FILE)))).toBeUndefined();
  });

  it('a generated file that cannot be loaded is an error, not a silent fallback', async () => {
    const file = join(await tempDirPerTest('htorder-standalone-'), STANDALONE_FILE);
    await writeFile(file, 'module.exports = {{ broken\n');
    expect(() => prebuilt(pathToFileURL(file))).toThrow(SyntaxError);
  });

  it('the sources, which have no generated file beside them, validate with the schema compiled at run time', () => {
    // Tests import src/, where the build writes nothing: the module fell back to the compile.
    for (const doc of DOCS) {
      expect(validateManifest(doc)).toBe(compiled(doc));
      expect(validateManifest.errors ?? null).toEqual(compiled.errors ?? null);
    }
  });
});
