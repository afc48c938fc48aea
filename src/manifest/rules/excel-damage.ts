import type { ManifestDeliveryAddress, ManifestJob } from '../model.js';
import { eachItem, itemPath, NOTHING, type Finding } from './rule.js';

/**
 * What a spreadsheet does to a file it opens and saves again, caught whatever the input
 * (YAML, CSV, a mapped export, .xlsx): a postal code read as a number loses its leading zeros
 * (`02134` → `2134`, Rome's `00118` → `118`), a long number becomes scientific notation
 * (`1.23E+11`, `1,61756E+10` in a German Excel) or keeps only its first 15 digits
 * (`1234567890123456789` → `1234567890123450000`), a date becomes its serial day number (`46363`;
 * see due-date.ts).
 *
 * What is unambiguous is repaired, with a warning naming the value's row and column: a US ZIP
 * and a German PLZ are always five digits, so four digits are a lost leading zero. These rules
 * change the manifest, so the repaired value is what is checked, sent and fingerprinted. What is
 * not unambiguous is never sent: the digits a scientific-notation or truncated number dropped
 * cannot be recovered. A phone the order can go without is left out, with a warning; an order
 * number, a postal code or an item code it cannot is an error.
 */

/** Numeric postal codes some of which start with zeros, by country. */
interface PostalFormat {
  /** How the message names them: `US ZIP codes`. */
  kind: string;
  width: number;
  /** The fewest digits left when a spreadsheet drops the zeros (Rome 00118 → 118). */
  fewest: number;
  /** ZIP+4 suffixes (`02134-1234`). */
  plus4?: boolean;
}

const US: PostalFormat = { kind: 'US ZIP codes', width: 5, fewest: 3, plus4: true };

/** Each country by the names a manifest or an export may give it: ISO codes, English and its own name. */
const POSTAL_FORMATS: ReadonlyArray<[PostalFormat, readonly string[]]> = [
  [US, ['us', 'usa', 'u.s.', 'u.s.a.', 'united states', 'united states of america', 'vereinigte staaten']],
  [{ ...US, kind: 'Puerto Rico ZIP codes' }, ['pr', 'pri', 'puerto rico']],
  [{ ...US, kind: 'US Virgin Islands ZIP codes' }, ['vi', 'vir', 'u.s. virgin islands', 'us virgin islands']],
  [{ kind: 'German postal codes (PLZ)', width: 5, fewest: 4 }, ['de', 'deu', 'germany', 'deutschland']],
  [{ kind: 'French postal codes', width: 5, fewest: 4 }, ['fr', 'fra', 'france', 'frankreich']],
  [{ kind: 'Italian postal codes (CAP)', width: 5, fewest: 3 }, ['it', 'ita', 'italy', 'italia', 'italien']],
  [{ kind: 'Spanish postal codes', width: 5, fewest: 4 }, ['es', 'esp', 'spain', 'españa', 'espana', 'spanien']],
  [{ kind: 'Finnish postal codes', width: 5, fewest: 3 }, ['fi', 'fin', 'finland', 'suomi', 'finnland']],
  [{ kind: 'Mexican postal codes', width: 5, fewest: 4 }, ['mx', 'mex', 'mexico', 'méxico', 'mexiko']],
  [{ kind: 'Malaysian postcodes', width: 5, fewest: 4 }, ['my', 'mys', 'malaysia']],
  [{ kind: 'Australian postcodes', width: 4, fewest: 3 }, ['au', 'aus', 'australia', 'australien']],
  [{ kind: 'Norwegian postal codes', width: 4, fewest: 3 }, ['no', 'nor', 'norway', 'norge', 'norwegen']],
];

const POSTAL: ReadonlyMap<string, PostalFormat> = new Map(
  POSTAL_FORMATS.flatMap(([format, names]) => names.map((n) => [n, format] as const)),
);

const WIDEST = Math.max(...POSTAL_FORMATS.map(([format]) => format.width));

/** Digits, optionally with a ZIP+4 suffix: what `02134` / `02134-1234` become in a spreadsheet. */
const DIGITS = /^(\d{1,9})(-\d{4})?$/;

const WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** The postal format of an address's country, by its ISO code or its name. */
function postalFormat(address: ManifestDeliveryAddress): PostalFormat | undefined {
  const country = [address.countryCodeISO2, address.country].find((c) => typeof c === 'string' && c.trim() !== '');
  return country === undefined ? undefined : POSTAL.get(country.trim().toLowerCase());
}

export function postalCodeZero(job: ManifestJob, j: number): readonly Finding[] {
  const address = job.deliveryAddress;
  if (address === null || typeof address !== 'object') return NOTHING;
  const code = address.postalCode;
  if (typeof code !== 'string') return NOTHING;
  const m = DIGITS.exec(code);
  // As wide as the widest format: no zero lost, whatever the country (most codes stop here).
  if (!m || m[1].length >= WIDEST) return NOTHING;
  const format = postalFormat(address);
  if (format === undefined || (m[2] !== undefined && format.plus4 !== true)) return NOTHING;
  const digits = m[1].length;
  if (digits >= format.width || digits < format.fewest) return NOTHING;
  const padded = `${m[1].padStart(format.width, '0')}${m[2] ?? ''}`;
  address.postalCode = padded;
  const lost = format.width - digits;
  return [
    {
      code: 'postal-code.leading-zero',
      severity: 'warning',
      field: `jobs[${j}].deliveryAddress.postalCode`,
      message:
        `"${code}" has ${WORDS[digits]} digits; ${format.kind} have ${WORDS[format.width]}, so a spreadsheet ` +
        `dropped its leading ${lost === 1 ? 'zero' : 'zeros'}: sent as "${padded}" (format the column as Text in ` +
        'the export to keep it)',
    },
  ];
}

/** `1.23E+11`, `1,23E+11` (German Excel), `4.5e10`: how a spreadsheet shows a long number. */
const SCIENTIFIC = /^[+-]?\d+(?:[.,]\d+)?[eE][+-]?\d+$/;
/**
 * The same as a spreadsheet writes it, always signed (`E+11`): codes that only look like a
 * number with an exponent (a SKU `3E10`) are left alone.
 */
const SIGNED_SCIENTIFIC = /^[+-]?\d+(?:[.,]\d+)?[eE][+-]\d+$/;

/**
 * A number a spreadsheet kept only 15 significant digits of: 16 or more digits (a `+`, blanks
 * and dashes between them allowed), every one after the 15th a zero.
 */
function truncated(text: string): boolean {
  // Fewer characters than 16 hold fewer than 16 digits: most values (every SKU, most phones) stop here.
  if (text.length < 16) return false;
  const digits = text.replace(/^\+|[\s-]/g, '');
  return digits.length >= 16 && /^\d+$/.test(digits) && /^0+$/.test(digits.slice(15));
}

function startsLikeNumber(text: string): boolean {
  const c = text.charCodeAt(0);
  return (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d;
}

/** What a value lost, when a spreadsheet damaged it beyond repair; else undefined. */
function lostDigits(value: unknown, scientific = SIGNED_SCIENTIFIC): 'scientific' | 'truncated' | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  // Both damages start with a digit or a sign: one look settles most values (SKUs, names).
  if (text.length > 40 || !startsLikeNumber(text)) return undefined;
  if (scientific.test(text)) return 'scientific';
  return truncated(text) ? 'truncated' : undefined;
}

const HOW = 'Export again without opening the file in a spreadsheet, or format the column as Text before saving';

function damage(value: string, lost: 'scientific' | 'truncated', what: string): string {
  return lost === 'scientific'
    ? `"${value}" is a number in scientific notation, as a spreadsheet shows a long ${what}: its real digits are lost`
    : `"${value}" ends in zeros after its 15th digit, as a spreadsheet keeps a long ${what}: its last digits are lost`;
}

export function scientificOrderNumber(job: ManifestJob, j: number): readonly Finding[] {
  const n = job.orderNumber;
  const lost = lostDigits(n, SCIENTIFIC);
  if (lost === undefined) return NOTHING;
  return [
    {
      code: `order-number.${lost}`,
      field: `jobs[${j}].orderNumber`,
      message: `${damage(n, lost, 'order number')} and it cannot be the order number. ${HOW}`,
    },
  ];
}

/**
 * Phones, postal codes and item codes whose digits a spreadsheet lost: a phone is left out
 * (the API takes an address without one), with a warning; a postal code or an item code is an
 * error, since a guess would ship to the wrong place or make the wrong thing.
 */
export function lostDigitFields(job: ManifestJob, j: number): readonly Finding[] {
  const address = job.deliveryAddress;
  const findings: Finding[] = [];
  if (address !== null && typeof address === 'object') {
    for (const key of ['phone', 'mobile'] as const) {
      const value = address[key];
      const lost = lostDigits(value);
      if (lost === undefined || typeof value !== 'string') continue;
      delete address[key];
      findings.push({
        code: `${key}.${lost}`,
        severity: 'warning',
        field: `jobs[${j}].deliveryAddress.${key}`,
        message: `${damage(value, lost, 'phone number')}: the order is sent without it. ${HOW}`,
      });
    }
    const postal = address.postalCode;
    const lost = lostDigits(postal);
    if (lost !== undefined && typeof postal === 'string')
      findings.push({
        code: `postal-code.${lost}`,
        field: `jobs[${j}].deliveryAddress.postalCode`,
        message: `${damage(postal, lost, 'postal code')}. ${HOW}`,
      });
  }
  const items = eachItem(job, (item, i) => {
    // Read by name, and an array made only for a damaged code: this runs for every item of a file.
    const code = itemCodeDamage(item.code, j, i, 'code');
    const variant = itemCodeDamage(item.variantCode, j, i, 'variantCode');
    if (code === undefined) return variant === undefined ? NOTHING : [variant];
    return variant === undefined ? [code] : [code, variant];
  });
  return findings.length === 0 && items.length === 0 ? NOTHING : [...findings, ...items];
}

function itemCodeDamage(value: unknown, j: number, i: number, key: 'code' | 'variantCode'): Finding | undefined {
  const lost = lostDigits(value);
  if (lost === undefined || typeof value !== 'string') return undefined;
  return {
    code: `item-code.${lost}`,
    field: itemPath(j, i, key),
    message: `${damage(value, lost, 'SKU')}, so no item can be told from it. ${HOW}`,
  };
}

/**
 * A cell of a column the export writes as digits zero-padded to at least `width` (a mapping's
 * zeroPaddedColumns: Squarespace's order IDs, `00412`) that has fewer digits: a spreadsheet read
 * it as a number and dropped its leading zeros. The zeros are all it lost, so it is padded back
 * (`412` → `00412`) with a warning: read as `412`, an order the ledger knows as `00412` would be
 * another order, sent again. `source` says where the width is declared (`the squarespace preset`).
 */
export function zerosRestored(
  cell: string,
  width: number,
  column: string,
  source: string,
): { value: string; message: string } | undefined {
  const text = cell.trim();
  if (text.length >= width || !/^\d+$/.test(text)) return undefined;
  const value = text.padStart(width, '0');
  const count = (n: number): string => `${WORDS[n] ?? n} ${n === 1 ? 'digit' : 'digits'}`;
  return {
    value,
    message:
      `"${text}" has ${count(text.length)}; this export writes ${column} with at least ${count(width)} (${source}), ` +
      `so a spreadsheet dropped its leading zeros: read as "${value}". ${HOW}`,
  };
}
