import type { ManifestJob } from '../model.js';
import { NOTHING, type Finding } from './rule.js';

/**
 * What a spreadsheet does to a file it opens and saves again, caught whatever the input
 * (YAML, CSV, a mapped export, .xlsx): a postal code read as a number loses its leading zero
 * (`02134` → `2134`), a long order number becomes scientific notation (`1.23E+11`), a date
 * becomes its serial day number (`46363`; see due-date.ts).
 *
 * What is unambiguous is repaired, with a warning naming the value's row and column: a US ZIP
 * and a German PLZ are always five digits, so four digits are a lost leading zero. This is the
 * one rule that changes the manifest, so the repaired value is what is checked, sent and
 * fingerprinted. What is not unambiguous is refused: the digits a scientific-notation number
 * dropped cannot be recovered.
 */

/** Countries whose postal codes are exactly five digits, by the names a manifest may use. */
const FIVE_DIGIT_POSTAL: ReadonlyMap<string, string> = new Map([
  ['us', 'US ZIP codes'],
  ['usa', 'US ZIP codes'],
  ['united states', 'US ZIP codes'],
  ['united states of america', 'US ZIP codes'],
  ['vereinigte staaten', 'US ZIP codes'],
  ['de', 'German postal codes (PLZ)'],
  ['deu', 'German postal codes (PLZ)'],
  ['germany', 'German postal codes (PLZ)'],
  ['deutschland', 'German postal codes (PLZ)'],
]);

/** Four digits, optionally with a ZIP+4 suffix: what `02134` / `02134-1234` become in a spreadsheet. */
const LOST_ZERO = /^(\d{4})(-\d{4})?$/;

export function postalCodeZero(job: ManifestJob, j: number): readonly Finding[] {
  const address = job.deliveryAddress;
  if (address === null || typeof address !== 'object') return NOTHING;
  const code = address.postalCode;
  if (typeof code !== 'string') return NOTHING;
  const m = LOST_ZERO.exec(code);
  if (!m) return NOTHING;
  const country = [address.countryCodeISO2, address.country].find((c) => typeof c === 'string' && c.trim() !== '');
  const kind = country === undefined ? undefined : FIVE_DIGIT_POSTAL.get(country.trim().toLowerCase());
  // A ZIP+4 suffix only exists in the US.
  if (kind === undefined || (m[2] !== undefined && !kind.startsWith('US'))) return NOTHING;
  const padded = `0${code}`;
  address.postalCode = padded;
  return [
    {
      code: 'postal-code.leading-zero',
      severity: 'warning',
      field: `jobs[${j}].deliveryAddress.postalCode`,
      message:
        `"${code}" has four digits; ${kind} have five, so a spreadsheet dropped its leading zero: ` +
        `sent as "${padded}" (format the column as Text in the export to keep it)`,
    },
  ];
}

/** `1.23E+11`, `1,23E+11` (German Excel), `4.5e10`: how a spreadsheet shows a long number. */
const SCIENTIFIC = /^[+-]?\d+(?:[.,]\d+)?[eE][+-]?\d+$/;

export function scientificOrderNumber(job: ManifestJob, j: number): readonly Finding[] {
  const n = job.orderNumber;
  if (typeof n !== 'string' || !SCIENTIFIC.test(n.trim())) return NOTHING;
  return [
    {
      code: 'order-number.scientific',
      field: `jobs[${j}].orderNumber`,
      message:
        `"${n}" is a number in scientific notation, as a spreadsheet shows a long order number: ` +
        'its real digits are lost and it cannot be the order number. Export again without opening the file ' +
        'in a spreadsheet, or format the column as Text before saving',
    },
  ];
}
