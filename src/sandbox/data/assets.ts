import type { AssetDto, PriceBand, PriceCodeDto } from '../../api/types.js';
import { daysBefore } from '../dates.js';
import { round2 } from '../jobs/pricing.js';
import { createRandom, deriveSeed } from '../random.js';
import type { CustomerDef } from './accounts.js';
import type { RegionDef } from './regions.js';

/** An asset as stored: the full single-asset form (externalId, customerId) is kept. */
export type AssetRecord = AssetDto & { externalId: string | null; customerId: number | null };

const GARMENTS = ['Gildan 5000', 'Bella 3001', 'Hoodie', 'Cap', 'Tote', 'Polo', null] as const;
const SUBJECTS = [
  'Team logo',
  'Club crest',
  'Sponsor band',
  'Event tee',
  'Staff uniform',
  'Mascot',
  'Back number',
  'Left chest',
  'Tour dates',
  'Charity run',
];

/** Bands for an asset whose price code is gone (null): one flat ladder by process. */
function fallbackBands(processCode: string, factor: number): PriceBand[] {
  return [{ from: 10, to: null, unitPrice: round2((processCode === 'SCR' ? 0.8 : 2.5) * factor) }];
}

export function assetFromPriceCode(
  pc: PriceCodeDto,
  tag: string,
  assetId: number,
  customerId: number | null,
  tier: string,
  createDate: string,
  description: string,
  garment: string | null,
  externalId: string | null,
): AssetRecord {
  return {
    assetId,
    assetTag: tag,
    processCode: pc.processCode,
    description,
    garment,
    priceTierCode: tier,
    setup: pc.standardSetup ?? 0,
    reset: pc.standardReset ?? 0,
    priceCode: pc.priceCode,
    assetUrl: `https://cdn.sandbox.invalid/assets/${tag}.png`,
    createDate,
    isGlobal: customerId === null,
    isArchived: false,
    priceBands: (pc.priceBands ?? []).map((b) => ({ ...b })),
    externalId,
    customerId,
  };
}

/**
 * The customer's assets: the fixed named ones first (us-demo: A10001 active, A10002 archived,
 * A10003 with a null price code), then generated ones from the seed: about 10% archived and
 * 5% with a null price code.
 */
export function generateAssets(
  customer: CustomerDef,
  region: RegionDef,
  catalogue: PriceCodeDto[],
  seed: number,
  start: Date,
): AssetRecord[] {
  const rnd = createRandom(deriveSeed(seed, `assets:${customer.customerId}`));
  const listed = catalogue.filter((p) => !p.hasMetaDataAttributes);
  const byName = (prefix: string): PriceCodeDto => listed.find((p) => p.priceCode?.startsWith(prefix)) ?? listed[0];
  const factor = region.priceFactor * customer.tierFactor;
  const asset = (
    pc: PriceCodeDto,
    i: number,
    daysAgo: number,
    description: string,
    garment: string | null,
    externalId: string | null,
  ): AssetRecord =>
    assetFromPriceCode(
      pc,
      `${customer.assetPrefix}${customer.assetStart + i}`,
      customer.customerId * 1000 + i + 1,
      customer.customerId,
      customer.priceTierCode,
      daysBefore(start, daysAgo),
      description,
      garment,
      externalId,
    );
  const out: AssetRecord[] = [
    asset(byName(`DTF Full ${region.colourWord} 10"`), 0, 400, 'Front logo, full colour', 'Gildan 5000', 'ext-0001'),
    {
      ...asset(byName(`DTF Full ${region.colourWord} 4"`), 1, 380, 'Old sponsor badge', 'Cap', null),
      isArchived: true,
    },
    {
      ...asset(byName('Screen Print 1'), 2, 360, 'Legacy one-colour mark', 'Polo', null),
      priceCode: null,
      priceBands: fallbackBands('SCR', factor),
    },
  ];
  for (let i = 3; i < customer.assetCount; i++) {
    const a = asset(
      rnd.pick(listed),
      i,
      rnd.int(1, 700),
      `${rnd.pick(SUBJECTS)} ${rnd.int(1, 99)}`,
      rnd.pick(GARMENTS),
      rnd.chance(0.3) ? `ext-${String(i).padStart(4, '0')}` : null,
    );
    if (rnd.chance(0.1)) a.isArchived = true;
    if (rnd.chance(0.05)) {
      a.priceCode = null;
      a.priceBands = fallbackBands(a.processCode ?? 'DTF', factor);
    }
    out.push(a);
  }
  return out;
}

/** Global (catalogue) assets of a region: G20001 is fixed and orderable; a few are archived. */
export function generateGlobalAssets(
  region: RegionDef,
  catalogue: PriceCodeDto[],
  seed: number,
  start: Date,
): AssetRecord[] {
  const rnd = createRandom(deriveSeed(seed, `global-assets:${region.code}`));
  const listed = catalogue.filter((p) => !p.hasMetaDataAttributes && p.processCode === 'DTF');
  const global = (pc: PriceCodeDto, i: number, daysAgo: number, description: string): AssetRecord =>
    assetFromPriceCode(
      pc,
      `G${20001 + i}`,
      9_000_001 + i,
      null,
      'GLOBAL',
      daysBefore(start, daysAgo),
      description,
      null,
      null,
    );
  const first = listed.find((p) => p.priceCode?.includes('10"')) ?? listed[0];
  const out = [global(first, 0, 900, 'Stars and stripes flag')];
  for (let i = 1; i < 30; i++) {
    const a = global(
      rnd.pick(listed),
      i,
      rnd.int(30, 900),
      `${rnd.pick(['Flag', 'Heart', 'Star', 'Paw print', 'Lightning bolt', 'Anchor'])} motif ${i}`,
    );
    if (rnd.chance(0.15)) a.isArchived = true;
    out.push(a);
  }
  return out;
}
