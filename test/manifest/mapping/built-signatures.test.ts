import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BUILT_SIGNATURES_FILE,
  builtSignatures,
  presetsStamp,
} from '../../../src/manifest/mapping/built-signatures.js';
import { computedSignatures, presetTexts } from '../../../src/manifest/mapping/recognise.js';
import { ROOT } from '../../support/dist.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/** The presets' signatures built by `npm run build` are the ones computed from the presets on disk, or unused. */
describe('preset signatures built ahead', () => {
  const built = pathToFileURL(join(ROOT, 'dist/manifest/mapping', BUILT_SIGNATURES_FILE));

  it("the build's signatures are the presets' own, computed", () => {
    const texts = presetTexts();
    expect(texts.has('amazon') && texts.has('ebay') && texts.has('shopify')).toBe(true);
    expect(builtSignatures(texts, built)).toEqual(computedSignatures(texts));
  });

  it('a preset changed after the build, or no built file: computed instead', async () => {
    const texts = presetTexts();
    const changed = new Map(texts).set('shopify', `${texts.get('shopify')}\n# edited\n`);
    expect(builtSignatures(changed, built)).toBeUndefined();
    const dir = await tempDirPerTest();
    expect(builtSignatures(texts, pathToFileURL(join(dir, 'none.json')))).toBeUndefined();
    const other = join(dir, 'other.json');
    await writeFile(other, JSON.stringify({ stamp: presetsStamp(changed), signatures: [] }));
    expect(builtSignatures(changed, pathToFileURL(other))).toEqual([]);
    expect(builtSignatures(texts, pathToFileURL(other))).toBeUndefined();
  });
});
