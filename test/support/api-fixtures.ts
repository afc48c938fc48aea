import type { AssetDto, PriceCodeDto, ProcessAttribute, StockItem } from '../../src/api/types.js';
import type { SourceMap } from '../../src/manifest/model.js';

/** A SourceMap that echoes the path it was asked about, so tests can see which field was located. */
export const echoSources: SourceMap = { locate: (path) => ({ file: 'orders.yaml', columnName: path }) };

export function colorAttributes(word = 'Colors'): ProcessAttribute[] {
  return [
    {
      name: word,
      type: 'select',
      required: true,
      isMetaDataAttribute: false,
      enumerableValues: ['1', '2', '3', '4'].map((v) => ({ value: v, text: v === '4' ? 'Four' : v, selected: false })),
    },
    { name: 'Notes', type: 'text', required: false, isMetaDataAttribute: false, minLength: 2, maxLength: 30 },
    { name: 'Layers', type: 'int', required: false, isMetaDataAttribute: false, minValue: 1, maxValue: 3 },
  ];
}

export function priceCode(over: Partial<PriceCodeDto> = {}): PriceCodeDto {
  return {
    priceCode: 'DTF Full Color 10" x 10"',
    description: null,
    categoryCode: 'DTF',
    categoryName: null,
    name: null,
    processCode: 'DTF',
    masterProcessCode: 'DTF',
    minimumQuantity: 10,
    externalSupplier: null,
    externalPriceCode: null,
    hasMetaDataAttributes: false,
    standardSetup: 25,
    standardReset: 10,
    sampleAvailable: false,
    samplePrice: null,
    sizeUnit: 'in',
    sizeWidth: 10,
    sizeHeight: 10,
    attributes: colorAttributes(),
    priceBands: [
      { from: 10, to: 49, unitPrice: 3.2 },
      { from: 50, to: 99, unitPrice: 2.8 },
      { from: 100, to: null, unitPrice: 2.4 },
    ],
    ...over,
  };
}

export function customSize(): PriceCodeDto {
  const dim = (name: string, max: number): ProcessAttribute => ({
    name,
    type: 'decimal',
    required: true,
    isMetaDataAttribute: true,
    minValue: 1,
    maxValue: max,
  });
  return priceCode({
    priceCode: 'DTF Custom Size',
    hasMetaDataAttributes: true,
    sizeWidth: null,
    sizeHeight: null,
    attributes: [dim('DG-X', 22), dim('DG-Y', 100), ...colorAttributes()],
    priceBands: null,
  });
}

export function asset(over: Partial<AssetDto> = {}): AssetDto {
  return {
    assetId: 1,
    assetTag: 'A10001',
    processCode: 'DTF',
    description: null,
    garment: null,
    priceTierCode: null,
    setup: 25,
    reset: 10,
    priceCode: 'DTF Full Color 10" x 10"',
    assetUrl: null,
    createDate: '2025-01-01T00:00:00Z',
    isGlobal: false,
    isArchived: false,
    priceBands: [
      { from: 10, to: 49, unitPrice: 3.2 },
      { from: 50, to: null, unitPrice: 2.8 },
    ],
    ...over,
  };
}

export function stockItem(over: Partial<StockItem> = {}): StockItem {
  return {
    supplier: null,
    categoryName: null,
    categoryUnitId: null,
    stockCode: 'GD5000',
    processCode: 'STK',
    stockName: 'Tee',
    stockDescription: null,
    stockSpecifications: null,
    priceCompatibleLookupCode: null,
    rank: 1,
    stockVariants: [
      { variantCode: 'GD5000-BLK', colour: 'Black', variantImageUrl: null, numberOfSizes: 5, sizesCsv: 'S,M,L,XL,2XL' },
      {
        variantCode: 'GD5000-WHT',
        colour: 'White',
        variantImageUrl: null,
        numberOfSizes: 5,
        sizesCsv: 'S, M, L, XL, 2XL',
      },
    ],
    stockImageUrl: null,
    images: [],
    showAvailableStock: false,
    markets: ['US'],
    badges: [],
    slug: 'gd5000',
    seoTitle: null,
    seoDescription: null,
    priceBands: [
      { from: 1, to: 11, unitPrice: 4 },
      { from: 12, to: null, unitPrice: 3.5 },
    ],
    ...over,
  };
}
