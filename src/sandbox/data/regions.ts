import type { DeliveryOption } from '../../api/types.js';

export type RegionCode = 'us' | 'nz' | 'au' | 'uk' | 'eu';
export const REGION_CODES: readonly RegionCode[] = ['us', 'nz', 'au', 'uk', 'eu'];

/** A factory location. Only active, non-virtual ones may be chosen by `locationCodeOverride`. */
export interface LocationDef {
  code: string;
  name: string;
  timezone: string;
  active: boolean;
  virtual: boolean;
}

export interface RegionDef {
  code: RegionCode;
  name: string;
  realm: string;
  currency: string;
  /** The spelling the region's catalogue uses: US `Color`/`Colors`, elsewhere `Colour`/`Colours`. */
  colourWord: 'Color' | 'Colour';
  /** Multiplies the base (USD) price ladder into the region's currency. */
  priceFactor: number;
  defaultCountry: string;
  locations: LocationDef[];
  deliveryOptions: DeliveryOption[];
  /** Tax rate used for JobDto.taxTotal. */
  taxRate: number;
}

const option = (code: string, label: string, rank: number, isCollection = false): DeliveryOption => ({
  code,
  label,
  isCollection,
  rank,
  gangRank: rank * 10,
  value: code,
  deliveryLabelEnabled: !isCollection,
});

const pickup = (rank: number): DeliveryOption => option('PICKUP', 'Customer Pickup', rank, true);

export const REGIONS: Record<RegionCode, RegionDef> = {
  us: {
    code: 'us',
    name: 'United States',
    realm: 'htorder-us',
    currency: 'USD',
    colourWord: 'Color',
    priceFactor: 1,
    defaultCountry: 'US',
    taxRate: 0,
    locations: [
      { code: 'DAL', name: 'Dallas', timezone: 'America/Chicago', active: true, virtual: false },
      { code: 'LAX', name: 'Los Angeles', timezone: 'America/Los_Angeles', active: true, virtual: false },
      { code: 'DROP', name: 'Drop-ship (virtual)', timezone: 'America/Chicago', active: true, virtual: true },
      { code: 'NYC', name: 'New York (closed)', timezone: 'America/New_York', active: false, virtual: false },
    ],
    deliveryOptions: [
      option('UPSGND', 'UPS Ground', 1),
      option('UPS2DA', 'UPS 2nd Day Air', 2),
      option('FDXON', 'FedEx Overnight', 3),
      pickup(4),
    ],
  },
  nz: {
    code: 'nz',
    name: 'New Zealand',
    realm: 'htorder-nz',
    currency: 'NZD',
    colourWord: 'Colour',
    priceFactor: 1.65,
    defaultCountry: 'NZ',
    taxRate: 0.15,
    locations: [{ code: 'AKL', name: 'Auckland', timezone: 'Pacific/Auckland', active: true, virtual: false }],
    deliveryOptions: [option('NZCOUR', 'NZ Courier', 1), pickup(2)],
  },
  au: {
    code: 'au',
    name: 'Australia',
    realm: 'htorder-au',
    currency: 'AUD',
    colourWord: 'Colour',
    priceFactor: 1.5,
    defaultCountry: 'AU',
    taxRate: 0.1,
    locations: [{ code: 'SYD', name: 'Sydney', timezone: 'Australia/Sydney', active: true, virtual: false }],
    deliveryOptions: [option('AUPOST', 'Australia Post', 1), option('STEXP', 'StarTrack Express', 2), pickup(3)],
  },
  uk: {
    code: 'uk',
    name: 'United Kingdom',
    realm: 'htorder-uk',
    currency: 'GBP',
    colourWord: 'Colour',
    priceFactor: 0.8,
    defaultCountry: 'GB',
    taxRate: 0.2,
    locations: [{ code: 'MAN', name: 'Manchester', timezone: 'Europe/London', active: true, virtual: false }],
    deliveryOptions: [option('RM48', 'Royal Mail Tracked 48', 1), option('DPDNXT', 'DPD Next Day', 2), pickup(3)],
  },
  eu: {
    code: 'eu',
    name: 'Europe',
    realm: 'htorder-eu',
    currency: 'EUR',
    colourWord: 'Colour',
    priceFactor: 0.92,
    defaultCountry: 'DE',
    taxRate: 0.19,
    locations: [{ code: 'BER', name: 'Berlin', timezone: 'Europe/Berlin', active: true, virtual: false }],
    deliveryOptions: [option('DHLEXP', 'DHL Express', 1), option('DPDEU', 'DPD Classic', 2), pickup(3)],
  },
};

export const defaultLocation = (region: RegionDef): LocationDef => region.locations[0];
