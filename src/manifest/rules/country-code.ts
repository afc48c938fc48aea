import type { ManifestJob } from '../model.js';
import { NOTHING, type Finding } from './rule.js';

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
