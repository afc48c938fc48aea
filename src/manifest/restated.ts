import { itemIndexOf, jobIndexOf } from './field-path.js';
import type { Diagnostic } from './model.js';

/**
 * Whether a rule finding restates a schema error: same item (`jobs[0].items[2]…`), or, outside
 * items, one path is a prefix of the other (`jobs[0]` wrong type ⊃ everything in it). The
 * faulted paths are indexed so that each finding costs its own path's length: comparing every
 * finding with every faulted path made a file whose every row is faulty quadratic.
 */
function restatesFault(faulted: readonly string[]): (field: string | undefined) => boolean {
  const exact = new Set(faulted);
  // Every faulted path and each path it is within (`jobs[0].items[2].code` → `jobs[0].items[2]`, `jobs[0]`…).
  const within = new Set(faulted.flatMap(withinOrSelf));
  return (field) => {
    if (field === undefined) return false;
    const item = itemIndexOf(field);
    // A faulted path within the finding's item or its path, or the finding's path within a faulted one.
    if (item !== undefined && within.has(`jobs[${item[0]}].items[${item[1]}]`)) return true;
    return within.has(field) || withinOrSelf(field).some((outer) => exact.has(outer));
  };
}

/**
 * `path` and every path it is within: each prefix that ends right before a `.` or a `[`
 * (`jobs[0].items` is within `jobs[0]`; `jobs[0].itemsX` is not; `jobs[1]` is not within `jobs[10]`).
 */
function withinOrSelf(path: string): string[] {
  const out = [path];
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0x2e || c === 0x5b) out.push(path.slice(0, i));
  }
  return out;
}

/** Whether an error outside every job (syntax, `version`, `defaults`) taints every job: the job rules do not run. */
export function hasFileLevelError(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error' && jobIndexOf(d.field) === undefined);
}

/**
 * restatesFault of the errors among `diagnostics` (as they are now) that name a field. Its index
 * (several strings an error: each faulted path's every prefix) is made when the first finding is
 * asked about: an input whose every row is faulty often has no rule finding at all, and a run
 * then never holds it beside every error (`npm run bench:invalid`, peak RSS).
 */
export function restatesErrorOf(diagnostics: readonly Diagnostic[]): (field: string | undefined) => boolean {
  const faulted = diagnostics.flatMap((d) => (d.severity === 'error' && d.field !== undefined ? [d.field] : []));
  let restates: ((field: string | undefined) => boolean) | undefined;
  return (field) => {
    if (field === undefined) return false;
    restates ??= restatesFault(faulted);
    return restates(field);
  };
}
