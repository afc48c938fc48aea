import type { PriceBand, PriceCodeDto, PricingProcessDto, ProcessAttribute } from '../../api/types.js';
import { round2 } from '../jobs/pricing.js';
import type { RegionDef } from './regions.js';

/**
 * The price-code catalogue of one customer, built from its region (spelling, currency factor)
 * and tier (per-account prices). Named demo codes are fixed; see docs/sandbox.md.
 */

const CUSTOM_SIZE_CODE = 'DTF Custom Size';

/** DTF per-square-inch rates by band; `DTF … 10" x 10"` thus costs 3.20 / 2.80 / 2.40. */
const DTF_RATES = [0.032, 0.028, 0.024];
const DTF_MAX_WIDTH = 22;
const DTF_MAX_HEIGHT = 100;

function colourAttributes(region: RegionDef): ProcessAttribute[] {
  const word = `${region.colourWord}s`;
  return [
    {
      name: word,
      type: 'select',
      label: `Number of ${region.colourWord.toLowerCase()}s`,
      description: `How many spot ${region.colourWord.toLowerCase()}s the design uses`,
      required: true,
      isMetaDataAttribute: false,
      enumerableValues: ['1', '2', '3', '4'].map((v) => ({ value: v, text: v, selected: v === '4' })),
      assetAttributeName: word.toLowerCase(),
    },
    {
      name: 'Notes',
      type: 'text',
      label: 'Notes for the print room',
      description: null,
      required: false,
      isMetaDataAttribute: false,
      assetAttributeName: 'notes',
      minLength: 2,
      maxLength: 30,
    },
    {
      name: 'Layers',
      type: 'int',
      label: 'White underbase layers',
      description: null,
      required: false,
      isMetaDataAttribute: false,
      assetAttributeName: null,
      minValue: 1,
      maxValue: 3,
    },
  ];
}

/** DTF bands for a size: first band from the minimum, then 50 and 100 breaks. */
function dtfBands(width: number, height: number, minimum: number, factor: number): PriceBand[] {
  const area = width * height;
  const unit = (rate: number): number => round2(Math.max(0.5, area * rate) * factor);
  return [
    { from: minimum, to: 49, unitPrice: unit(DTF_RATES[0]) },
    { from: 50, to: 99, unitPrice: unit(DTF_RATES[1]) },
    { from: 100, to: null, unitPrice: unit(DTF_RATES[2]) },
  ];
}

const scale = (bands: [number, number | null, number][], factor: number): PriceBand[] =>
  bands.map(([from, to, price]) => ({ from, to, unitPrice: round2(price * factor) }));

/** What a price code's own fields complete: its names and categories, no sample, inches. */
function base(code: string, processCode: string, categoryName: string) {
  return {
    priceCode: code,
    description: code,
    categoryCode: processCode,
    categoryName,
    name: code,
    processCode,
    masterProcessCode: processCode,
    externalSupplier: null,
    externalPriceCode: null,
    hasMetaDataAttributes: false,
    sampleAvailable: false,
    samplePrice: null,
    sampleLabel: null,
    sizeUnit: 'in',
  };
}

export function buildCatalogue(region: RegionDef, tierFactor: number): PriceCodeDto[] {
  const f = region.priceFactor * tierFactor;
  const colour = region.colourWord;
  const out: PriceCodeDto[] = [];
  const dtfSizes: [number, number][] = [
    [2, 2],
    [4, 4],
    [6, 6],
    [8, 8],
    [10, 10],
    [12, 12],
    [11, 17],
  ];
  for (const [w, h] of dtfSizes) {
    const minimum = w === 4 && h === 4 ? 25 : 10;
    const big = w * h >= 64;
    out.push({
      ...base(`DTF Full ${colour} ${w}" x ${h}"`, 'DTF', 'Direct to Film'),
      description: `Full-${colour.toLowerCase()} DTF transfer, ${w} x ${h} in`,
      minimumQuantity: minimum,
      standardSetup: round2((big ? 25 : 15) * f),
      standardReset: round2((big ? 10 : 5) * f),
      sizeWidth: w,
      sizeHeight: h,
      attributes: colourAttributes(region),
      priceBands: dtfBands(w, h, minimum, f),
    });
  }
  out.push({
    ...base(`Screen Print 1 ${colour} 3" x 3"`, 'SCR', 'Screen Print'),
    description: `One-${colour.toLowerCase()} screen-printed transfer, 3 x 3 in`,
    minimumQuantity: 50,
    standardSetup: round2(40 * f),
    standardReset: round2(15 * f),
    sampleAvailable: true,
    samplePrice: round2(5 * f),
    sampleLabel: 'Sample print',
    sizeWidth: 3,
    sizeHeight: 3,
    attributes: [colourAttributes(region)[1]],
    priceBands: scale(
      [
        [50, 99, 0.9],
        [100, 499, 0.7],
        [500, null, 0.5],
      ],
      f,
    ),
  });
  out.push({
    ...base(`Screen Print 2 ${colour} 6" x 6"`, 'SCR', 'Screen Print'),
    description: `Two-${colour.toLowerCase()} screen-printed transfer, 6 x 6 in`,
    minimumQuantity: 50,
    standardSetup: round2(60 * f),
    standardReset: round2(20 * f),
    sizeWidth: 6,
    sizeHeight: 6,
    attributes: [colourAttributes(region)[1]],
    priceBands: scale(
      [
        [50, 99, 1.6],
        [100, 499, 1.25],
        [500, null, 0.95],
      ],
      f,
    ),
  });
  if (region.code === 'us') {
    out.push({
      ...base('Sublimation 8" x 10"', 'SUB', 'Sublimation'),
      description: 'Sublimation transfer for polyester, 8 x 10 in',
      minimumQuantity: 12,
      standardSetup: null,
      standardReset: null,
      sizeWidth: 8,
      sizeHeight: 10,
      attributes: [],
      priceBands: scale(
        [
          [12, 99, 1.95],
          [100, null, 1.5],
        ],
        f,
      ),
    });
  }
  out.push(customSizeCode(region, tierFactor, null));
  return out;
}

/** The custom-size code; with `size` its bands are priced for that width × height. */
export function customSizeCode(
  region: RegionDef,
  tierFactor: number,
  size: { dgX: number; dgY: number } | null,
): PriceCodeDto {
  const f = region.priceFactor * tierFactor;
  const dim = (name: 'DG-X' | 'DG-Y', label: string, max: number): ProcessAttribute => ({
    name,
    type: 'decimal',
    label,
    description: `${label} in inches`,
    required: true,
    isMetaDataAttribute: true,
    assetAttributeName: null,
    minValue: 1,
    maxValue: max,
  });
  return {
    ...base(CUSTOM_SIZE_CODE, 'DTF', 'Direct to Film'),
    description: 'DTF transfer cut to a custom size',
    hasMetaDataAttributes: true,
    minimumQuantity: 10,
    standardSetup: round2(25 * f),
    standardReset: round2(10 * f),
    sizeWidth: size ? size.dgX : null,
    sizeHeight: size ? size.dgY : null,
    attributes: [
      dim('DG-X', 'Width', DTF_MAX_WIDTH),
      dim('DG-Y', 'Height', DTF_MAX_HEIGHT),
      ...colourAttributes(region),
    ],
    priceBands: size ? dtfBands(size.dgX, size.dgY, 10, f) : null,
  };
}

export const CUSTOM_SIZE_LIMITS = { dgX: DTF_MAX_WIDTH, dgY: DTF_MAX_HEIGHT };

export function buildProcesses(region: RegionDef): PricingProcessDto[] {
  const p = (
    processCode: string,
    description: string,
    sheetRank: number,
    sheetColor: string,
    w: number,
    h: number,
  ): PricingProcessDto => ({
    processCode,
    description,
    active: true,
    sheetRank,
    sheetColor,
    tooltip: `${description} transfers`,
    mapsToMaster: processCode,
    maximumSheetUnit: 'in',
    maximumSheetWidth: w,
    maximumSheetHeight: h,
  });
  const list = [
    p('DTF', 'Direct to Film', 1, '#1f77b4', DTF_MAX_WIDTH, DTF_MAX_HEIGHT),
    p('SCR', 'Screen Print', 2, '#ff7f0e', 14, 16),
  ];
  if (region.code === 'us') list.push(p('SUB', 'Sublimation', 3, '#2ca02c', 13, 19));
  return list;
}
