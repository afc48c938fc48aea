import type { JobCandidate } from '../api/types.js';
import { extend } from '../core/extend.js';
import type { Diagnostic, JobList, Manifest, ManifestJob } from '../manifest/model.js';
import { combineWarnings, estimateJob } from './estimate/estimate-job.js';
import type { JobEstimate } from './estimate/model.js';
import { diagnostic } from './preflight/diagnostic.js';
import { checkDateDue, earliestLocalDate } from './preflight/job-rules.js';
import { quote } from '../core/suggest.js';
import type { AccountCatalogue } from './catalogue.js';
import { resolveAddress } from './resolve-address.js';
import { resolveItem } from './resolve-item.js';

export interface ResolvedJob {
  orderNumber: string;
  jobIndex: number;
  /** The exact body to send (without validateOnly): API field names, resolved values. */
  candidate: JobCandidate;
  /** Errors and warnings, located. The job may be sent only when none is an error. */
  diagnostics: Diagnostic[];
  estimate: JobEstimate;
  /** The distinct process codes of the job's lines, sorted. */
  processCodes: string[];
  /**
   * Lines whose artwork link was made from an `artwork:` file: line index → the artwork
   * store's key (the SHA-256 of the file's bytes). A presigned link differs at every run; the
   * key says what it leads to.
   */
  artworkKeys?: Readonly<Record<number, string>>;
}

/** Job-level fields copied to the candidate as written (manifest-only keys such as `cancel` are not). */
const JOB_FIELDS = [
  'orderComment',
  'customerUserId',
  'mustDate',
  'timeSensitive',
  'description',
  'orderGroup',
  'orderGroupSequence',
  'locationCodeOverride',
] as const satisfies readonly (keyof ManifestJob & keyof JobCandidate)[];

/**
 * Stages 1–3 for one job: resolve its human values against the account's catalogue,
 * preflight every line against the fetched definitions, and estimate its cost. Pure
 * apart from the catalogue (which memoises, so resolving many jobs costs one call per
 * distinct value). Rejects only when the API cannot be asked (network, auth, 5xx):
 * everything wrong with the manifest is a diagnostic.
 *
 * Checks that need no account data (required fields, artwork URL on all PriceCode lines or
 * none, empty items, size sums) belong to the check stage (src/manifest/rules) and are not
 * repeated here, so each mistake is reported once.
 */
export async function resolveJob(
  manifest: Manifest<JobList>,
  jobIndex: number,
  catalogue: AccountCatalogue,
): Promise<ResolvedJob> {
  const job = manifest.jobs.at(jobIndex) as ManifestJob;
  const sources = manifest.sources;
  const base = `jobs[${jobIndex}]`;

  const promocode = job.promocode !== undefined && job.promocode.trim() !== '' ? job.promocode : undefined;
  // The promo check and the earliest ship date need only the lines' process codes: they are
  // asked as soon as the lines are resolved, while the address may still wait for its states
  // (one round trip less before a run's first dry run).
  const lines = Promise.all(
    job.items.map((item, i) => resolveItem(item, `${base}.items[${i}]`, i, catalogue, sources, manifest.preset)),
  ).then(async (items) => {
    const processCodes = [
      ...new Set(items.map((r) => r.pricing.processCode).filter((c): c is string => c !== undefined)),
    ].sort();
    const [promo, earliest] = await Promise.all([
      promocode === undefined ? undefined : catalogue.promo(promocode, processCodes),
      catalogue.earliestShipDate(processCodes),
    ]);
    return { items, processCodes, promo, earliest };
  });
  const [address, { items, processCodes, promo, earliest }, account] = await Promise.all([
    resolveAddress(job.deliveryAddress ?? {}, base, catalogue, sources),
    lines,
    catalogue.account(),
  ]);

  const diagnostics: Diagnostic[] = [...address.diagnostics, ...items.flatMap((r) => r.diagnostics)];
  if (promo && !promo.isValid) {
    diagnostics.push(
      diagnostic(
        sources,
        'error',
        'promocode.invalid',
        `${base}.promocode`,
        `promo code ${quote(promocode as string)} is not valid${promo.message ? `: ${promo.message}` : ''}`,
      ),
    );
  }

  // A missing dateDue is among the API's documented 500s: always send one.
  let dateDue = job.dateDue;
  if (earliest) {
    diagnostics.push(...checkDateDue(job.dateDue, earliest, jobIndex, sources));
    dateDue ??= earliestLocalDate(earliest);
  } else if (dateDue === undefined) {
    diagnostics.push(
      diagnostic(
        sources,
        'error',
        'dateDue.unavailable',
        `${base}.dateDue`,
        `the API gives no earliest ship date for ${processCodes.join(', ') || 'this job'}: give a dateDue`,
      ),
    );
  }

  const fields: Record<string, unknown> = { orderNumber: job.orderNumber };
  for (const k of JOB_FIELDS) if (job[k] !== undefined) fields[k] = job[k];
  if (dateDue !== undefined) fields.dateDue = dateDue;
  if (promocode !== undefined) fields.promocode = promocode;
  const candidate = extend(fields, {
    deliveryAddress: address.address,
    items: items.map((r) => r.line),
  }) as JobCandidate;

  const currency = account?.currency ?? undefined;
  const pricing = items.map((r) => r.pricing);
  const estimate = estimateJob(pricing, currency, promo?.isValid ? promo : undefined);
  diagnostics.push(...combineWarnings(jobIndex, pricing, estimate.lines, sources, currency));

  return { orderNumber: job.orderNumber, jobIndex, candidate, diagnostics, estimate, processCodes };
}
