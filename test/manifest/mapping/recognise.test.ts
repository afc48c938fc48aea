import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/manifest/load-manifest.js';
import { loadMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { readHeader } from '../../../src/manifest/mapping/read-header.js';
import { presetSignatures, recogniseHeader, signaturesOf } from '../../../src/manifest/mapping/recognise.js';
import { INPUT_MAPPING_CHOICE } from '../../../src/manifest/read-input.js';
import { ROOT } from '../../support/dist.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/** A shop export given no mapping is read through the one preset its header fits, or refused with one message. */

const SHOPIFY = join(ROOT, 'samples/shopify/orders_export.csv');
const WOO = join(ROOT, 'samples/woocommerce/orders-export.csv');

let dir: string;
beforeEach(async () => {
  dir = await tempDirPerTest('htorder-recognise-');
});

/** The sample with its header changed by `edit`, in the test's folder. */
async function edited(sample: string, edit: (header: string[]) => string[]): Promise<string> {
  const [head, ...rest] = (await readFile(sample, 'utf8')).split(/\r?\n/);
  const cells = head.split(',').map((c) => c.replace(/^"|"$/g, ''));
  const file = join(dir, 'export.csv');
  await writeFile(file, [edit(cells).join(','), ...rest].join('\n'));
  return file;
}

describe('recogniseHeader', () => {
  const presets = signaturesOf([
    { preset: 'a', forms: [{ required: ['A1', 'A2', 'A3', 'Shared'], optional: ['A4'] }] },
    {
      preset: 'b',
      forms: [
        { required: ['B1', 'B2', 'B3', 'Shared'], optional: [] },
        { required: ['B1', 'B2', 'B5'], optional: [] },
      ],
    },
  ]);

  it('matches the one preset whose required and distinctive columns are all there', () => {
    expect(recogniseHeader(['A1', 'A2', 'A3', 'Shared', 'Other'], presets)).toEqual({
      kind: 'match',
      preset: 'a',
      matchedColumns: ['A1', 'A2', 'A3', 'Shared'],
    });
  });

  it('a header fits a preset by any of its forms (variants); optional columns need not be there', () => {
    expect(recogniseHeader(['B1', 'B2', 'B5', 'X'], presets)).toMatchObject({ kind: 'match', preset: 'b' });
    expect(recogniseHeader(['A1', 'A2', 'A3', 'Shared'], presets)).toMatchObject({ kind: 'match', preset: 'a' });
  });

  it('never guesses: two fits are ambiguous, a fit missing a required column is near', () => {
    expect(recogniseHeader(['A1', 'A2', 'A3', 'B1', 'B2', 'B3', 'Shared'], presets)).toEqual({
      kind: 'ambiguous',
      candidates: ['a', 'b'],
    });
    expect(recogniseHeader(['A1', 'A2', 'A4', 'Shared'], presets)).toMatchObject({
      kind: 'near',
      preset: 'a',
      missing: ['A3'],
    });
  });

  it('a header with a shared column alone, or a default-template header, is nobody’s', () => {
    expect(recogniseHeader(['Shared', 'orderNumber'], presets)).toEqual({ kind: 'none' });
    expect(recogniseHeader(['A1', 'Shared'], presets)).toEqual({ kind: 'none' });
  });

  it("the presets' signatures read from their YAML alone equal those of the presets as loadMapping reads them", async () => {
    const { formsOf } = await import('../../../src/manifest/mapping/recognise.js');
    const { presetNames } = await import('../../../src/manifest/mapping/load-mapping.js');
    const loaded = await Promise.all(
      presetNames().map(async (preset) => ({ preset, forms: formsOf(await loadMapping(preset)) })),
    );
    expect(presetSignatures()).toEqual(signaturesOf(loaded));
  });

  it('the shipped presets each recognise their own sample header', async () => {
    for (const [sample, preset] of [
      [SHOPIFY, 'shopify'],
      [WOO, 'woocommerce'],
      [join(ROOT, 'samples/odoo/sale.order.csv'), 'odoo'],
    ] as const) {
      const header = await readHeader(sample, 'csv');
      expect(recogniseHeader(header ?? [], presetSignatures())).toMatchObject({ kind: 'match', preset });
    }
  });
});

describe('loadManifest without a mapping', () => {
  it('reads a Shopify export through the shopify preset and says so', async () => {
    const r = await loadManifest(SHOPIFY);
    expect(r.recognised).toMatchObject({ preset: 'shopify' });
    expect(r.recognised?.matchedColumns).toContain('Lineitem sku');
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(r.manifest?.jobs.map((j) => j.orderNumber)).toEqual(['#1041', '#1042', '#1044']);
  });

  it('recognise: false reads it as the default template (and its errors)', async () => {
    const r = await loadManifest(SHOPIFY, { recognise: false });
    expect(r.recognised).toBeUndefined();
    expect(r.diagnostics.length).toBeGreaterThan(5);
  });

  it('a near match is one message naming the format, the missing column and the flag', async () => {
    const file = await edited(WOO, (h) => h.map((c) => (c === 'item_sku' ? 'sku' : c)));
    const r = await loadManifest(file);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ code: INPUT_MAPPING_CHOICE });
    expect(r.diagnostics[0].message).toBe(
      'this looks like a WooCommerce export, but its header lacks "item_sku", which the woocommerce preset reads; ' +
        'export with those columns (docs/presets/woocommerce.md), or use --mapping woocommerce with a mapping that ' +
        'extends it (docs/mappings.md)',
    );
  });

  it('a header that fits two presets is refused, naming both and the flag', async () => {
    const shopifyHeader = (await readHeader(SHOPIFY, 'csv')) ?? [];
    const file = await edited(WOO, (h) => [...h, ...shopifyHeader]);
    const r = await loadManifest(file);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0].message).toMatch(
      /fits more than one known export: Shopify \(--mapping shopify\), WooCommerce \(--mapping woocommerce\); choose one with --mapping/,
    );
  });

  it('a hostile wide header stops at csvMaxColumns and is not recognised', async () => {
    const file = join(dir, 'wide.csv');
    const header = (await readHeader(SHOPIFY, 'csv')) ?? [];
    await writeFile(file, `${[...header, ...Array.from({ length: 5000 }, (_, i) => `c${i}`)].join(',')}\n#1,a\n`);
    expect(await readHeader(file, 'csv', { maxColumns: 1000 })).toBeUndefined();
    const r = await loadManifest(file, { csv: { maxColumns: 1000 } });
    expect(r.recognised).toBeUndefined();
    expect(r.diagnostics.some((d) => /csvMaxColumns/.test(d.message))).toBe(true);
  });
});

describe('an explicit mapping always wins', () => {
  it('a WooCommerce export through the Shopify preset is one message naming WooCommerce', async () => {
    const r = await loadManifest(WOO, { mapping: await loadMapping('shopify') });
    expect(r.diagnostics.map((d) => d.message)).toEqual([
      'this looks like a WooCommerce export, which the mapping shopify does not read; use --mapping woocommerce',
    ]);
    expect(r.recognised).toBeUndefined();
  });

  it('an export its own preset reads is read through the mapping given, with no recognition', async () => {
    const r = await loadManifest(SHOPIFY, { mapping: await loadMapping('shopify') });
    expect(r.recognised).toBeUndefined();
    expect(r.manifest?.jobs).toHaveLength(3);
  });
});

describe('each preset given another platform’s export', () => {
  const SAMPLES: Array<[string, string]> = [
    ['shopify', 'samples/shopify/orders_export.csv'],
    ['woocommerce', 'samples/woocommerce/orders-export.csv'],
    ['woocommerce', 'samples/woocommerce-webtoffee/order-export.csv'],
    ['odoo', 'samples/odoo/sale.order.csv'],
    ['etsy', 'samples/etsy/EtsySoldOrderItems2026-11.csv'],
    ['bigcommerce', 'samples/bigcommerce/orders-2026-11-22.csv'],
    ['squarespace', 'samples/squarespace/orders.csv'],
    ['wix', 'samples/wix/orders.csv'],
  ];
  const PRESETS = [...new Set(SAMPLES.map(([p]) => p))];

  it('no mapping: every sample is recognised as its own platform', async () => {
    for (const [preset, sample] of SAMPLES) {
      expect((await loadManifest(join(ROOT, sample))).recognised?.preset, sample).toBe(preset);
    }
  });

  it.each(PRESETS)('--mapping %s on every other platform’s sample: one line naming that platform', async (used) => {
    const mapping = await loadMapping(used);
    for (const [preset, sample] of SAMPLES.filter(([p]) => p !== used)) {
      const r = await loadManifest(join(ROOT, sample), { mapping });
      expect(
        r.diagnostics.map((d) => d.message),
        sample,
      ).toEqual([
        expect.stringMatching(
          new RegExp(
            `^this looks like an? .+ export, which the mapping ${used} does not read; use --mapping ${preset}$`,
          ),
        ),
      ]);
    }
  });
});
