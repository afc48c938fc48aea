import { describe, expect, it } from 'vitest';
import type { ManifestItem } from '../../../src/manifest/model.js';
import { checkAssetLine } from '../../../src/resolve/preflight/asset-line.js';
import { checkPriceCodeLine } from '../../../src/resolve/preflight/price-code-line.js';
import { checkStockLine } from '../../../src/resolve/preflight/stock-line.js';
import { asset, customSize, echoSources, priceCode, stockItem } from '../../support/api-fixtures.js';

const BASE = 'jobs[3].items[0]';
const pc = (over: Partial<ManifestItem>): ManifestItem => ({
  itemType: 'PriceCode',
  code: 'DTF Full Color 10" x 10"',
  quantity: 10,
  customerReference: 'front',
  attributes: { Colors: '4' },
  ...over,
});
const codes = (ds: { code: string }[]) => ds.map((d) => d.code);

describe('checkPriceCodeLine', () => {
  it('accepts a good line, including exactly the minimum', () => {
    expect(checkPriceCodeLine(pc({}), priceCode(), BASE, echoSources)).toEqual([]);
  });

  it('refuses a quantity below the minimum, naming both numbers and the code', () => {
    const out = checkPriceCodeLine(pc({ quantity: 5 }), priceCode(), BASE, echoSources);
    expect(out).toEqual([
      {
        severity: 'error',
        code: 'quantity.below-minimum',
        field: 'jobs[3].items[0].quantity',
        message: `5 is below the minimum quantity 10 of 'DTF Full Color 10" x 10"'`,
        source: { file: 'orders.yaml', columnName: 'jobs[3].items[0].quantity' },
      },
    ]);
  });

  it('lets a sample bypass the minimum only where samples are offered', () => {
    const sampleCode = priceCode({ sampleAvailable: true, samplePrice: 5 });
    expect(checkPriceCodeLine(pc({ quantity: 1, isSample: true }), sampleCode, BASE, echoSources)).toEqual([]);
    const out = checkPriceCodeLine(pc({ quantity: 1, isSample: true }), priceCode(), BASE, echoSources);
    expect(codes(out)).toEqual(['sample.unavailable']);
    expect(out[0].field).toBe('jobs[3].items[0].isSample');
  });

  it('checks attributes and custom-size dimensions', () => {
    expect(codes(checkPriceCodeLine(pc({ attributes: {} }), priceCode(), BASE, echoSources))).toEqual([
      'attribute.required',
    ]);
    const good = pc({ code: 'DTF Custom Size', attributes: { 'DG-X': '10', 'DG-Y': '12', Colors: '2' } });
    expect(checkPriceCodeLine(good, customSize(), BASE, echoSources)).toEqual([]);
    const noDims = pc({ code: 'DTF Custom Size', attributes: { Colors: '2' } });
    expect(codes(checkPriceCodeLine(noDims, customSize(), BASE, echoSources))).toEqual([
      'attribute.dimensions-missing',
    ]);
    const tooWide = pc({ code: 'DTF Custom Size', attributes: { 'DG-X': '30', 'DG-Y': '12', Colors: '2' } });
    const out = checkPriceCodeLine(tooWide, customSize(), BASE, echoSources);
    expect(out).toMatchObject([{ code: 'attribute.out-of-range', field: 'jobs[3].items[0].attributes.DG-X' }]);
    expect(out[0].message).toContain('outside 1 to 22');
  });
});

describe('checkAssetLine', () => {
  const item: ManifestItem = { itemType: 'Asset', code: 'A10002', quantity: 20 };
  it('refuses an archived asset', () => {
    expect(checkAssetLine(item, asset(), BASE, echoSources)).toEqual([]);
    const out = checkAssetLine(item, asset({ assetTag: 'A10002', isArchived: true }), BASE, echoSources);
    expect(out).toMatchObject([
      {
        code: 'asset.archived',
        field: 'jobs[3].items[0].code',
        message: 'asset A10002 is archived and cannot be reordered',
      },
    ]);
  });
});

describe('checkAssetLine minimum', () => {
  it('refuses a quantity below the first price band', () => {
    const out = checkAssetLine({ itemType: 'Asset', code: 'A10001', quantity: 5 }, asset(), BASE, echoSources);
    expect(out).toMatchObject([
      {
        code: 'quantity.below-minimum',
        field: 'jobs[3].items[0].quantity',
        message: '5 is below the minimum quantity 10 of asset A10001',
      },
    ]);
    expect(checkAssetLine({ itemType: 'Asset', code: 'A10001', quantity: 10 }, asset(), BASE, echoSources)).toEqual([]);
  });
});

describe('checkStockLine', () => {
  const st = (over: Partial<ManifestItem>): ManifestItem => ({
    itemType: 'Stock',
    code: 'GD5000',
    variantCode: 'GD5000-BLK',
    sizeQuantities: { S: 10, M: 20 },
    ...over,
  });

  it('sums the sizes into the quantity', () => {
    expect(checkStockLine(st({}), stockItem(), BASE, echoSources)).toEqual({
      diagnostics: [],
      variantCode: 'GD5000-BLK',
      sizeQuantities: { S: 10, M: 20 },
      quantity: 30,
    });
  });

  it('trims the sizes of sizesCsv', () => {
    expect(
      checkStockLine(st({ variantCode: 'GD5000-WHT', sizeQuantities: { '2XL': 1 } }), stockItem(), BASE, echoSources)
        .diagnostics,
    ).toEqual([]);
  });

  it('refuses a size outside the run, suggesting the right case', () => {
    const out = checkStockLine(st({ sizeQuantities: { S: 1, xl: 2 } }), stockItem(), BASE, echoSources).diagnostics;
    expect(out).toMatchObject([{ code: 'stock.size-unknown', field: 'jobs[3].items[0].sizeQuantities.xl' }]);
    expect(out[0].message).toBe(
      '"xl" is not a size of GD5000-BLK (did you mean "XL"?); its sizes are: S, M, L, XL, 2XL',
    );
  });

  it('refuses an unknown variant with a suggestion', () => {
    const out = checkStockLine(st({ variantCode: 'GD5000-BLU' }), stockItem(), BASE, echoSources);
    expect(out.variantCode).toBeUndefined();
    expect(out.diagnostics).toMatchObject([{ code: 'stock.variant-unknown', field: 'jobs[3].items[0].variantCode' }]);
    expect(out.diagnostics[0].message).toContain('GD5000-BLK, GD5000-WHT');
  });

  it('takes the variant from a variant code, or from a single-variant item, else asks for one', () => {
    expect(
      checkStockLine(st({ code: 'GD5000-WHT', variantCode: undefined }), stockItem(), BASE, echoSources).variantCode,
    ).toBe('GD5000-WHT');
    const equipment = stockItem({
      stockCode: 'PRESS-16',
      stockVariants: [
        { variantCode: 'PRESS-16-STD', colour: null, variantImageUrl: null, numberOfSizes: 1, sizesCsv: 'Qty' },
      ],
    });
    expect(
      checkStockLine(
        st({ code: 'PRESS-16', variantCode: undefined, sizeQuantities: { Qty: 2 } }),
        equipment,
        BASE,
        echoSources,
      ),
    ).toEqual({ diagnostics: [], variantCode: 'PRESS-16-STD', sizeQuantities: { Qty: 2 }, quantity: 2 });
    expect(codes(checkStockLine(st({ variantCode: undefined }), stockItem(), BASE, echoSources).diagnostics)).toEqual([
      'stock.variant-missing',
    ]);
  });

  it('equipment takes only the size Qty', () => {
    const equipment = stockItem({
      stockCode: 'PRESS-16',
      stockVariants: [
        { variantCode: 'PRESS-16-STD', colour: null, variantImageUrl: null, numberOfSizes: 1, sizesCsv: 'Qty' },
      ],
    });
    const out = checkStockLine(
      st({ code: 'PRESS-16', variantCode: 'PRESS-16-STD', sizeQuantities: { qty: 1 } }),
      equipment,
      BASE,
      echoSources,
    );
    expect(out.diagnostics[0].message).toContain('(did you mean "Qty"?)');
  });

  it('needs sizes that add up to something', () => {
    expect(
      codes(checkStockLine(st({ sizeQuantities: undefined }), stockItem(), BASE, echoSources).diagnostics),
    ).toEqual(['stock.sizes-missing']);
    expect(codes(checkStockLine(st({ sizeQuantities: { S: 0 } }), stockItem(), BASE, echoSources).diagnostics)).toEqual(
      ['stock.quantity-zero'],
    );
  });

  it('equipment written with only a quantity gets the size Qty; other stock does not', () => {
    const equipment = stockItem({
      stockCode: 'PRESS-16',
      stockVariants: [
        { variantCode: 'PRESS-16-STD', colour: null, variantImageUrl: null, numberOfSizes: 1, sizesCsv: 'Qty' },
      ],
    });
    const out = checkStockLine(
      { itemType: 'Stock', code: 'PRESS-16', variantCode: 'PRESS-16-STD', quantity: 3 },
      equipment,
      BASE,
      echoSources,
    );
    expect(out).toEqual({ diagnostics: [], variantCode: 'PRESS-16-STD', sizeQuantities: { Qty: 3 }, quantity: 3 });
    const tee = checkStockLine(st({ sizeQuantities: undefined, quantity: 3 }), stockItem(), BASE, echoSources);
    expect(codes(tee.diagnostics)).toEqual(['stock.sizes-missing']);
    expect(tee.diagnostics[0].message).toBe('a Stock line needs sizeQuantities (sizes: S, M, L, XL, 2XL)');
  });
});
