import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ManifestJob } from '../../src/manifest/model.js';
import { lostDigitFields, scientificOrderNumber } from '../../src/manifest/rules/excel-damage.js';

/**
 * The rules that refuse digits a spreadsheet lost look at every phone, postal code and item code
 * of a file, so they settle most values at a glance (too short to have lost digits, not starting
 * like a number). Their verdicts must be exactly those of the plain definitions below, which test
 * every value against the patterns in full.
 */

const SIGNED_SCIENTIFIC = /^[+-]?\d+(?:[.,]\d+)?[eE][+-]\d+$/;
const SCIENTIFIC = /^[+-]?\d+(?:[.,]\d+)?[eE][+-]?\d+$/;

function plainLost(value: string, scientific: RegExp): 'scientific' | 'truncated' | undefined {
  const text = value.trim();
  if (text.length > 40) return undefined;
  if (scientific.test(text)) return 'scientific';
  const digits = text.replace(/^\+|[\s-]/g, '');
  return digits.length >= 16 && /^\d+$/.test(digits) && /^0+$/.test(digits.slice(15)) ? 'truncated' : undefined;
}

/** The finding codes the plain definitions give for a job holding `value` in every field the rules read. */
function plainCodes(value: string): string[] {
  const lost = plainLost(value, SIGNED_SCIENTIFIC);
  if (lost === undefined) return [];
  return [`phone.${lost}`, `mobile.${lost}`, `postal-code.${lost}`, `item-code.${lost}`, `item-code.${lost}`];
}

function jobWith(value: string): ManifestJob {
  return {
    orderNumber: value,
    deliveryAddress: { deliveryMethod: 'UPSGND', phone: value, mobile: value, postalCode: value },
    items: [{ itemType: 'Stock', code: value, variantCode: value, quantity: 1 }],
  } as ManifestJob;
}

/** Text made of what numbers, codes and their damage are made of: digits, signs, blanks, exponents, separators. */
const anyText = fc.string({
  unit: fc.constantFrom(...'0000000123456789+-  \t\u00a0eE.,Ax"/'.split('')),
  maxLength: 45,
});
/** Long runs of digits, some ending in zeros, some signed or spaced, some in scientific notation. */
const numberLike = fc
  .tuple(
    fc.constantFrom('', '+', '-', ' ', '+1 '),
    fc.stringMatching(/^[1-9][0-9]{0,20}$/),
    fc.constantFrom('', '000', '0000000000', '-000', ' 000 000', 'E+11', ',61756E+10', 'e10', '.5E-3'),
    fc.constantFrom('', ' ', '0'),
  )
  .map((parts) => parts.join(''));

describe('digits a spreadsheet lost: the quick looks agree with the plain definitions', () => {
  it('phones, postal codes and item codes', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, numberLike), (value) => {
        expect(lostDigitFields(jobWith(value), 0).map((f) => f.code)).toEqual(plainCodes(value));
      }),
      { numRuns: 5000 },
    );
  });

  it('order numbers (an unsigned exponent counts)', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, numberLike), (value) => {
        const lost = plainLost(value, SCIENTIFIC);
        const codes = scientificOrderNumber(jobWith(value), 0).map((f) => f.code);
        expect(codes).toEqual(lost === undefined ? [] : [`order-number.${lost}`]);
      }),
      { numRuns: 5000 },
    );
  });

  it('examples of each verdict, so the properties above are not vacuous', () => {
    const codes = (v: string) => lostDigitFields(jobWith(v), 0).map((f) => f.code);
    expect(codes('1,61756E+10')).toContain('phone.scientific');
    expect(codes(' +1 617 555 0142 000 000 ')).toContain('phone.truncated');
    expect(codes('-1234567890123450000')).toContain('item-code.truncated');
    expect(codes('DTF Full Color 10" x 10"')).toEqual([]);
    expect(codes('617-555-0142')).toEqual([]);
  });
});
