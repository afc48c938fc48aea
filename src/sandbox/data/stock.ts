import type { PriceBand, StockItem, StockShippingConfig, StockVariant } from '../../api/types.js';

/** Longest stock or variant code the API accepts in `GET /Stock?code=`; longer → 400. */
export const MAX_STOCK_CODE_LENGTH = 30;

/** A stock item as the sandbox keeps it: the wire item plus flags the API never shows. */
export interface StockRecord {
  id: number;
  item: Omit<StockItem, 'markets' | 'shippingConfigs' | 'priceBands'>;
  basePriceBands: PriceBand[];
  archived: boolean;
  /** Hidden by configuration: never returned, whatever the query. */
  hidden: boolean;
}

const variant = (variantCode: string, colour: string | null, sizesCsv: string): StockVariant => ({
  variantCode,
  colour,
  variantImageUrl: `https://cdn.sandbox.invalid/stock/${variantCode.toLowerCase()}.jpg`,
  numberOfSizes: sizesCsv.split(',').length,
  sizesCsv,
});

function record(
  id: number,
  stockCode: string,
  processCode: string,
  stockName: string,
  categoryName: string,
  variants: StockVariant[],
  bands: [number, number | null, number][],
  opts: { archived?: boolean; hidden?: boolean; badges?: string[] } = {},
): StockRecord {
  const slug = stockCode.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const image = { url: `https://cdn.sandbox.invalid/stock/${slug}.jpg`, name: stockName, altText: stockName };
  return {
    id,
    archived: opts.archived ?? false,
    hidden: opts.hidden ?? false,
    basePriceBands: bands.map(([from, to, unitPrice]) => ({ from, to, unitPrice })),
    item: {
      supplier: processCode === 'EQUIP' ? 'PressWorks' : 'Gildan',
      categoryName,
      categoryUnitId: processCode === 'EQUIP' ? 2 : 1,
      stockCode,
      processCode,
      stockName,
      stockDescription: `${stockName} (sandbox stock)`,
      stockSpecifications: null,
      priceCompatibleLookupCode: null,
      rank: id,
      stockVariants: variants,
      stockImageUrl: image.url,
      images: [image],
      showAvailableStock: processCode !== 'EQUIP',
      badges: opts.badges ?? [],
      slug,
      seoTitle: stockName,
      seoDescription: null,
    },
  };
}

const ADULT = 'S,M,L,XL,2XL';

export const STOCK: readonly StockRecord[] = [
  record(
    1,
    'GD5000',
    'GARM',
    'Gildan 5000 Heavy Cotton Tee',
    'T-Shirts',
    [variant('GD5000-BLK', 'Black', ADULT), variant('GD5000-WHT', 'White', ADULT)],
    [
      [1, 11, 4.5],
      [12, 71, 3.95],
      [72, null, 3.4],
    ],
    { badges: ['bestseller'] },
  ),
  record(
    2,
    'PRESS-16',
    'EQUIP',
    '16" x 20" Heat Press',
    'Equipment',
    [variant('PRESS-16-STD', null, 'Qty')],
    [[1, null, 899]],
  ),
  record(
    3,
    'GD64000',
    'GARM',
    'Gildan Softstyle Tee',
    'T-Shirts',
    [variant('GD64000-NVY', 'Navy', 'XS,S,M,L,XL,2XL,3XL'), variant('GD64000-RED', 'Red', 'S,M,L,XL')],
    [
      [1, 11, 5.1],
      [12, null, 4.6],
    ],
  ),
  record(
    4,
    'BC3001',
    'GARM',
    'Bella+Canvas 3001 Jersey Tee',
    'T-Shirts',
    [variant('BC3001-HTH', 'Heather Grey', 'S,M,L,XL')],
    [[1, null, 6.2]],
  ),
  record(
    5,
    'OLD100',
    'GARM',
    'Discontinued Classic Tee',
    'T-Shirts',
    [variant('OLD100-BLK', 'Black', 'S,M,L')],
    [[1, null, 3]],
    { archived: true },
  ),
  record(
    6,
    'HIDDEN-1',
    'GARM',
    'Configuration-hidden Tee',
    'T-Shirts',
    [variant('HIDDEN-1-BLK', 'Black', 'S,M,L')],
    [[1, null, 3]],
    { hidden: true },
  ),
  record(7, 'TOTE-1', 'GARM', 'Canvas Tote Bag', 'Bags', [variant('TOTE-1-NAT', 'Natural', 'Qty')], [[1, null, 2.75]]),
];

const location = (code: string, name: string, city: string, country: string) => ({
  locationCode: code,
  locationName: name,
  locale: null,
  shipFromCity: city,
  shipFromCountryCodeIso2: country,
});

function config(
  id: number,
  stockItemId: number,
  markets: string[],
  active: boolean,
  extra: Partial<StockShippingConfig> = {},
): StockShippingConfig {
  return {
    id,
    stockItemId,
    markets,
    shipMode: 'parcel',
    fulfilmentLocations: markets.includes('US')
      ? [location('DAL', 'Dallas', 'Dallas', 'US')]
      : [location('AKL', 'Auckland', 'Auckland', 'NZ')],
    weight: 0.2,
    weightUnit: 'kg',
    length: 30,
    width: 25,
    height: 2,
    dimensionUnit: 'cm',
    fixedShipping: null,
    groundOnly: false,
    estimatedLeadDays: 2,
    active,
    createdAt: '2025-01-15T00:00:00Z',
    updatedAt: '2025-06-01T00:00:00Z',
    shipmentTypeOptions: [
      { code: 'STANDARD', name: 'Standard', price: null },
      { code: 'EXPRESS', name: 'Express', price: 12.5 },
    ],
    ...extra,
  };
}

export const STOCK_SHIPPING: readonly StockShippingConfig[] = [
  config(101, 1, ['US', 'CA'], true),
  config(102, 1, ['NZ', 'AU'], true),
  config(201, 2, ['US'], true, { weight: 22, groundOnly: true, fixedShipping: 45, shipMode: 'freight' }),
  config(202, 2, ['NZ', 'AU'], false),
  config(301, 3, ['US', 'UK'], true),
  config(401, 4, ['UK', 'EU'], true),
  config(501, 5, ['US'], true),
  config(601, 6, ['US'], true),
];

/** Whether `code` is the item's stock code or one of its variant codes. */
export const hasCode = (s: StockRecord, code: string): boolean =>
  s.item.stockCode === code || s.item.stockVariants.some((v) => v.variantCode === code);
