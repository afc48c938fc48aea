import type { ManifestJob } from '../model.js';
import { NOTHING, type Finding } from './rule.js';

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
