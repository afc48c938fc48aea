import type { JobList, Manifest, ManifestJob, SourceLocation, SourceMap } from '../model.js';
import { eachItem, itemPath, NOTHING, type Finding } from './rule.js';

/**
 * Characters that are invisible or drawn like another: C0/C1 controls (Cc), format characters
 * such as U+200B, U+2060 and U+FEFF (Cf), lone surrogates (Cs), line and paragraph separators,
 * and every space but U+0020. "PO-1" followed by U+200B looks like "PO-1" in every report yet is
 * another order to the ledger and the API.
 */
const LOOK_ALIKE_CHARACTER = /(?! )[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}]/u;

/**
 * An orderNumber is the job's identity (the ledger key, and the exact text the in-doubt search
 * looks for on the account), so two order numbers that print the same must be the same string.
 * Leading/trailing spaces, invisible or look-alike characters, and text not in Unicode NFC are
 * refused, not repaired: the file, the ledger, the API and the reports then hold one spelling.
 */
export function orderNumberShape(job: ManifestJob, j: number): readonly Finding[] {
  const n = job.orderNumber;
  if (typeof n !== 'string' || n === '') return NOTHING;
  const field = `jobs[${j}].orderNumber`;
  if (n.trim() !== n)
    return [{ code: 'order-number.whitespace', field, message: `orderNumber "${n}" has leading or trailing spaces` }];
  const odd = LOOK_ALIKE_CHARACTER.exec(n);
  if (odd) {
    const point = odd[0].codePointAt(0) ?? 0;
    const name = `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
    const at = `at character ${[...n.slice(0, odd.index)].length + 1}`;
    if (/\p{Cc}/u.test(odd[0]))
      return [
        {
          code: 'order-number.control-character',
          field,
          message: `orderNumber contains the control character ${name} ${at}`,
        },
      ];
    const message = `orderNumber contains ${name} ${at}, an invisible or look-alike character; remove it so the order number reads as it is`;
    return [{ code: 'order-number.invisible-character', field, message }];
  }
  if (n.normalize('NFC') !== n)
    return [
      {
        code: 'order-number.not-nfc',
        field,
        message: `orderNumber "${n}" is not in Unicode NFC (composed) form, e.g. an "é" written as "e" and a combining accent; save it composed ("${n.normalize('NFC')}")`,
      },
    ];
  return NOTHING;
}

/**
 * orderNumber is the job's identity (the ledger key): two jobs may not share one. Compared in
 * NFC, so "Café" composed and decomposed are one order number here too.
 */
export function uniqueOrderNumber(manifest: Manifest<JobList>): Finding[] {
  const seen = new OrderNumbers();
  const findings: Finding[] = [];
  let i = 0;
  for (const job of manifest.jobs) seen.add(job, i++, manifest.sources, findings);
  return findings;
}

/** The order numbers met so far, job after job (uniqueOrderNumber; a windowed read's check, job by job). */
export class OrderNumbers {
  private readonly first = new Map<string, number>();

  /** Job `i`, after every job before it: its finding, if an earlier job has its order number, to `into`. */
  add(job: ManifestJob, i: number, sources: SourceMap, into: Finding[]): void {
    if (typeof job.orderNumber !== 'string' || job.orderNumber === '') return;
    const same = job.orderNumber.normalize('NFC');
    const earlier = this.first.get(same);
    if (earlier === undefined) {
      this.first.set(same, i);
      return;
    }
    const here = sources.locate(`jobs[${i}].orderNumber`);
    const there = sources.locate(`jobs[${earlier}].orderNumber`);
    into.push({
      code: 'order-number.duplicate',
      field: `jobs[${i}].orderNumber`,
      message: `orderNumber "${job.orderNumber}" is used twice: jobs[${earlier}] at ${describeLocation(there)} and jobs[${i}] at ${describeLocation(here)}; each job needs its own`,
    });
  }
}

/** "line 3, column 18" or "row 7", for messages that name a second location. */
function describeLocation(loc: SourceLocation): string {
  if (loc.row !== undefined) return `row ${loc.row}`;
  if (loc.line !== undefined) return `line ${loc.line}, column ${loc.column ?? 1}`;
  return loc.file;
}

/** Every job ships somehow: deliveryMethod is required, on the job or in defaults. */
export function deliveryMethodRequired(job: ManifestJob, j: number): readonly Finding[] {
  const method = job.deliveryAddress?.deliveryMethod;
  if (typeof method === 'string' && method.trim() !== '') return NOTHING;
  return [
    {
      code: 'delivery-method.missing',
      field: `jobs[${j}].deliveryAddress.deliveryMethod`,
      message: 'missing deliveryMethod (a delivery option code or label, on the job or in defaults.deliveryAddress)',
    },
  ];
}

/** countryCodeISO2 is exactly two letters; the API rejects a three-letter code. */
export function countryCodeShape(job: ManifestJob, j: number): readonly Finding[] {
  const code = job.deliveryAddress?.countryCodeISO2;
  if (code === undefined || code === null) return NOTHING;
  const field = `jobs[${j}].deliveryAddress.countryCodeISO2`;
  if (typeof code === 'string' && /^[A-Za-z]{2}$/.test(code)) return NOTHING;
  if (typeof code === 'string' && /^[A-Za-z]{3}$/.test(code)) {
    return [
      {
        code: 'country-code.iso3',
        field,
        message: `"${code}" is a three-letter code; countryCodeISO2 takes exactly two letters. Write \`country: ${code}\` instead (it accepts a name, ISO2 or ISO3)`,
      },
    ];
  }
  return [
    {
      code: 'country-code.shape',
      field,
      message: `must be exactly two letters (ISO 3166-1 alpha-2, e.g. US), got ${JSON.stringify(code)}; for a country name use \`country:\``,
    },
  ];
}

/** orderGroupSequence is a position within an orderGroup; alone it links nothing. */
export function orderGroupSequence(job: ManifestJob, j: number): readonly Finding[] {
  if (job.orderGroupSequence === undefined || job.orderGroup !== undefined) return NOTHING;
  return [
    {
      code: 'order-group.sequence-without-group',
      field: `jobs[${j}].orderGroupSequence`,
      message: 'orderGroupSequence needs an orderGroup',
    },
  ];
}

/**
 * A Stock line's quantity comes from its sizes. When both are written they must agree, and
 * sizes that are all zero order nothing.
 */
export function sizeQuantitiesAgree(job: ManifestJob, j: number): readonly Finding[] {
  return eachItem(job, (item, i) => {
    const sizes = item.sizeQuantities;
    if (!sizes || typeof sizes !== 'object') return NOTHING;
    const keys = Object.keys(sizes);
    if (keys.length === 0) {
      return [
        {
          code: 'size-quantities.all-zero',
          field: itemPath(j, i, 'sizeQuantities'),
          message: 'every size quantity is zero; order at least one unit',
        },
      ];
    }
    let sum = 0;
    for (let k = 0; k < keys.length; k++) {
      const n = sizes[keys[k]];
      if (typeof n === 'number') sum += n;
    }
    if (item.quantity !== undefined && item.quantity !== sum) {
      return [
        {
          code: 'size-quantities.sum-mismatch',
          field: itemPath(j, i, 'quantity'),
          message: `quantity ${item.quantity} does not match the sum of sizeQuantities (${sum}); give one or make them agree`,
        },
      ];
    }
    return NOTHING;
  });
}
