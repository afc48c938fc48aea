import type { AssetType, Country, JobStatus, ProcessCode, SizeSet, State } from '../../api/types.js';

const c = (
  name: string,
  iso2: string,
  iso3: string,
  hasState: boolean,
  hasPostalCode = true,
  hasSuburb = false,
): Country => ({
  name,
  iso2,
  iso3,
  hasSuburb,
  hasState,
  hasPostalCode,
});

export const COUNTRIES: readonly Country[] = [
  c('United States', 'US', 'USA', true),
  c('New Zealand', 'NZ', 'NZL', false, true, true),
  c('United Kingdom', 'GB', 'GBR', false),
  c('Australia', 'AU', 'AUS', true, true, true),
  c('Canada', 'CA', 'CAN', true),
  c('Germany', 'DE', 'DEU', false),
  c('France', 'FR', 'FRA', false),
  c('Ireland', 'IE', 'IRL', false, false),
  c('Mexico', 'MX', 'MEX', false),
  c('Norway', 'NO', 'NOR', false),
  c('Japan', 'JP', 'JPN', false),
  c('Netherlands', 'NL', 'NLD', false),
  c('Spain', 'ES', 'ESP', false),
  c('Italy', 'IT', 'ITA', false),
  c('Sweden', 'SE', 'SWE', false),
  c('Denmark', 'DK', 'DNK', false),
  c('Singapore', 'SG', 'SGP', false),
  c('South Africa', 'ZA', 'ZAF', false),
];

const US_STATES: [string, string][] = [
  ['Alabama', 'AL'],
  ['Alaska', 'AK'],
  ['Arizona', 'AZ'],
  ['Arkansas', 'AR'],
  ['California', 'CA'],
  ['Colorado', 'CO'],
  ['Connecticut', 'CT'],
  ['Delaware', 'DE'],
  ['District of Columbia', 'DC'],
  ['Florida', 'FL'],
  ['Georgia', 'GA'],
  ['Hawaii', 'HI'],
  ['Idaho', 'ID'],
  ['Illinois', 'IL'],
  ['Indiana', 'IN'],
  ['Iowa', 'IA'],
  ['Kansas', 'KS'],
  ['Kentucky', 'KY'],
  ['Louisiana', 'LA'],
  ['Maine', 'ME'],
  ['Maryland', 'MD'],
  ['Massachusetts', 'MA'],
  ['Michigan', 'MI'],
  ['Minnesota', 'MN'],
  ['Mississippi', 'MS'],
  ['Missouri', 'MO'],
  ['Montana', 'MT'],
  ['Nebraska', 'NE'],
  ['Nevada', 'NV'],
  ['New Hampshire', 'NH'],
  ['New Jersey', 'NJ'],
  ['New Mexico', 'NM'],
  ['New York', 'NY'],
  ['North Carolina', 'NC'],
  ['North Dakota', 'ND'],
  ['Ohio', 'OH'],
  ['Oklahoma', 'OK'],
  ['Oregon', 'OR'],
  ['Pennsylvania', 'PA'],
  ['Rhode Island', 'RI'],
  ['South Carolina', 'SC'],
  ['South Dakota', 'SD'],
  ['Tennessee', 'TN'],
  ['Texas', 'TX'],
  ['Utah', 'UT'],
  ['Vermont', 'VT'],
  ['Virginia', 'VA'],
  ['Washington', 'WA'],
  ['West Virginia', 'WV'],
  ['Wisconsin', 'WI'],
  ['Wyoming', 'WY'],
];
const AU_STATES: [string, string][] = [
  ['Australian Capital Territory', 'ACT'],
  ['New South Wales', 'NSW'],
  ['Northern Territory', 'NT'],
  ['Queensland', 'QLD'],
  ['South Australia', 'SA'],
  ['Tasmania', 'TAS'],
  ['Victoria', 'VIC'],
  ['Western Australia', 'WA'],
];
const CA_PROVINCES: [string, string][] = [
  ['Alberta', 'AB'],
  ['British Columbia', 'BC'],
  ['Manitoba', 'MB'],
  ['New Brunswick', 'NB'],
  ['Newfoundland and Labrador', 'NL'],
  ['Northwest Territories', 'NT'],
  ['Nova Scotia', 'NS'],
  ['Nunavut', 'NU'],
  ['Ontario', 'ON'],
  ['Prince Edward Island', 'PE'],
  ['Quebec', 'QC'],
  ['Saskatchewan', 'SK'],
  ['Yukon', 'YT'],
];

const toStates = (rows: [string, string][]): State[] => rows.map(([name, abbreviation]) => ({ name, abbreviation }));

export const STATES: Readonly<Record<string, State[]>> = {
  US: toStates(US_STATES),
  AU: toStates(AU_STATES),
  CA: toStates(CA_PROVINCES),
};

export const findCountry = (iso2: string): Country | undefined => COUNTRIES.find((x) => x.iso2 === iso2.toUpperCase());

/** The job-status lookup. The names are the sandbox lifecycle's states (see jobs/lifecycle.ts). */
export const JOB_STATUSES: readonly JobStatus[] = [
  { id: 1, name: 'Received' },
  { id: 2, name: 'Artwork Pending' },
  { id: 3, name: 'Scheduled' },
  { id: 4, name: 'In Production' },
  { id: 5, name: 'Dispatched' },
  { id: 6, name: 'Closed' },
  { id: 7, name: 'Cancelled' },
  { id: 8, name: 'Returned' },
  { id: 9, name: 'On Hold' },
];

const meta = (
  setupApplies: boolean,
  resetApplies: boolean,
  scheduleable: boolean,
  physicalStockRequired: boolean,
  printable: boolean,
): ProcessCode['metadata'] => ({
  setupApplies,
  resetApplies,
  scheduleable,
  physicalStockRequired,
  printable,
});

/** Deliberately NOT in rank order: the endpoint sorts, and a test checks it does. */
export const PROCESS_CODES: readonly ProcessCode[] = [
  { processCode: 'SCR', description: 'Screen Print Transfer', rank: 2, metadata: meta(true, true, true, false, true) },
  { processCode: 'GARM', description: 'Blank Garments', rank: 5, metadata: meta(false, false, false, true, false) },
  { processCode: 'DTF', description: 'Direct to Film', rank: 1, metadata: meta(true, true, true, false, true) },
  { processCode: 'SUB', description: 'Sublimation Transfer', rank: 3, metadata: meta(true, true, true, false, true) },
  { processCode: 'EQUIP', description: 'Equipment', rank: 6, metadata: meta(false, false, false, true, false) },
  { processCode: 'EMB', description: 'Embroidered Patch', rank: 4, metadata: meta(true, true, true, false, true) },
];

export const SIZE_SETS: readonly SizeSet[] = [
  { id: 1, name: 'Adult Apparel', sizes: ['XS', 'S', 'M', 'L', 'XL', '2XL', '3XL'] },
  { id: 2, name: 'Youth Apparel', sizes: ['YXS', 'YS', 'YM', 'YL', 'YXL'] },
  { id: 3, name: 'Equipment', sizes: ['Qty'] },
];

export const ASSET_TYPES: readonly AssetType[] = [
  { process: 'DTF', assetType: 'DTF Transfer' },
  { process: 'SCR', assetType: 'Screen Print Transfer' },
  { process: 'SUB', assetType: 'Sublimation Transfer' },
  { process: 'EMB', assetType: 'Embroidered Patch' },
];

/** Valid `X-Application-Name` origin codes (compared case-insensitively). */
export const ORIGIN_CODES: readonly string[] = ['API', 'HTORDER', 'WEB', 'SHOPIFY', 'WOOCOMMERCE', 'ZAPIER'];
