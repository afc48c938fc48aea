import type { Manifest, ManifestJob, SourceLocation } from '../model.js';
import { eachItem, itemPath, NOTHING, type Finding } from './rule.js';

/**
 * Leading/trailing spaces or control characters in an orderNumber make the exact-match
 * search that settles an in-doubt submission unreliable, so they are refused up front.
 */
export function orderNumberShape(job: ManifestJob, j: number): readonly Finding[] {
  const n = job.orderNumber;
  if (typeof n !== 'string' || n === '') return NOTHING;
  const field = `jobs[${j}].orderNumber`;
  if (n.trim() !== n)
    return [{ code: 'order-number.whitespace', field, message: `orderNumber "${n}" has leading or trailing spaces` }];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  if (/[\u0000-\u001f\u007f]/.test(n))
    return [{ code: 'order-number.control-character', field, message: 'orderNumber contains a control character' }];
  return NOTHING;
}

/** orderNumber is the job's identity (the ledger key): two jobs may not share one. */
export function uniqueOrderNumber(manifest: Manifest): Finding[] {
  const first = new Map<string, number>();
  const findings: Finding[] = [];
  manifest.jobs.forEach((job, i) => {
    if (typeof job.orderNumber !== 'string' || job.orderNumber === '') return;
    const earlier = first.get(job.orderNumber);
    if (earlier === undefined) {
      first.set(job.orderNumber, i);
      return;
    }
    const here = manifest.sources.locate(`jobs[${i}].orderNumber`);
    const there = manifest.sources.locate(`jobs[${earlier}].orderNumber`);
    findings.push({
      code: 'order-number.duplicate',
      field: `jobs[${i}].orderNumber`,
      message: `orderNumber "${job.orderNumber}" is used twice: jobs[${earlier}] at ${describeLocation(there)} and jobs[${i}] at ${describeLocation(here)}; each job needs its own`,
    });
  });
  return findings;
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
