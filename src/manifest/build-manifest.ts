import { ManifestSourceMap } from './manifest-source-map.js';
import { isPlainObject, mergeDefaults } from './merge-defaults.js';
import type { Manifest, ManifestItem, ManifestJob, RawDocument } from './model.js';

/**
 * Raw document → Manifest: `defaults` merged into every job, and zero-quantity sizes dropped
 * (spreadsheets fill every size column; the API wants only the sizes ordered).
 *
 * Built best-effort even when the document has schema errors, so reports can list every
 * job: a job's values are trustworthy only when no error diagnostic names that job.
 * Undefined when there is no list of jobs at all.
 */
export function buildManifest(raw: RawDocument): Manifest | undefined {
  const doc = raw.doc;
  if (!isPlainObject(doc) || !Array.isArray(doc.jobs)) return undefined;
  const defaults = isPlainObject(doc.defaults) ? doc.defaults : {};
  const jobs = doc.jobs.map((job) => toJob(mergeDefaults(defaults, isPlainObject(job) ? job : {})));
  return {
    file: raw.file,
    format: raw.format,
    sha256: raw.sha256,
    jobs,
    sources: new ManifestSourceMap(raw.sources, doc),
    ...(raw.csv ? { csv: raw.csv } : {}),
  };
}

function toJob(merged: unknown): ManifestJob {
  const job = (isPlainObject(merged) ? merged : {}) as Record<string, unknown>;
  const items = Array.isArray(job.items) ? job.items.map(toItem) : [];
  const deliveryAddress = isPlainObject(job.deliveryAddress) ? job.deliveryAddress : {};
  return { ...job, deliveryAddress, items } as unknown as ManifestJob;
}

function toItem(raw: unknown): ManifestItem {
  const item = (isPlainObject(raw) ? { ...raw } : {}) as Record<string, unknown>;
  if (isPlainObject(item.sizeQuantities)) {
    item.sizeQuantities = Object.fromEntries(Object.entries(item.sizeQuantities).filter(([, n]) => n !== 0));
  }
  return item as unknown as ManifestItem;
}
