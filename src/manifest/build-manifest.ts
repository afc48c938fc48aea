import { formatPath, parsePath, type PathSegment } from './field-path.js';
import type { Manifest, ManifestItem, ManifestJob, RawDocument, SourceMap } from './model.js';

/**
 * Raw document → Manifest: `defaults` merged into every job, and zero-quantity sizes dropped
 * (spreadsheets fill every size column; the API wants only the sizes ordered).
 *
 * Built best-effort even when the document has schema errors, so reports can list every
 * job: a job's values are trustworthy only when no error diagnostic names that job.
 * Undefined when there is no list of jobs at all.
 *
 * Without `defaults` (every CSV input) a job or item that needs no change IS the reader's
 * object, not a copy: a million-row file would otherwise hold every item twice. The raw
 * document is not used again once built, so sharing is safe.
 */
export function buildManifest(raw: RawDocument): Manifest | undefined {
  const doc = raw.doc;
  if (!isPlainObject(doc) || !Array.isArray(doc.jobs)) return undefined;
  const defaults = isPlainObject(doc.defaults) ? doc.defaults : {};
  const hasDefaults = Object.keys(defaults).length > 0;
  const jobs = doc.jobs.map((job) => toJob(hasDefaults ? mergeDefaults(defaults, isPlainObject(job) ? job : {}) : job));
  return {
    file: raw.file,
    format: raw.format,
    sha256: raw.sha256,
    jobs,
    // The document is needed only to place values that came from `defaults`.
    sources: manifestSourceMap(raw.sources, hasDefaults ? doc : undefined),
    ...(raw.csv ? { csv: raw.csv } : {}),
    ...(raw.skipped ? { skipped: raw.skipped } : {}),
  };
}

function toJob(job: unknown): ManifestJob {
  if (!isPlainObject(job)) return { deliveryAddress: {}, items: [] } as unknown as ManifestJob;
  const rawItems = Array.isArray(job.items) ? job.items : undefined;
  let items = rawItems;
  for (let k = 0; rawItems !== undefined && k < rawItems.length; k++) {
    const item = toItem(rawItems[k]);
    if (item === rawItems[k]) continue;
    // Copied on the first change only: most items are already in shape.
    if (items === rawItems) items = rawItems.slice();
    (items as unknown[])[k] = item;
  }
  if (items === job.items && isPlainObject(job.deliveryAddress)) return job as unknown as ManifestJob;
  const deliveryAddress = isPlainObject(job.deliveryAddress) ? job.deliveryAddress : {};
  return { ...job, deliveryAddress, items: items ?? [] } as unknown as ManifestJob;
}

/** The item itself when it needs no change; a copy without zero sizes otherwise. */
function toItem(raw: unknown): ManifestItem {
  if (!isPlainObject(raw)) return {} as ManifestItem;
  const sizes = raw.sizeQuantities;
  if (!isPlainObject(sizes) || !hasZero(sizes)) return raw as unknown as ManifestItem;
  const sizeQuantities = Object.fromEntries(Object.entries(sizes).filter(([, n]) => n !== 0));
  return { ...raw, sizeQuantities } as unknown as ManifestItem;
}

/** Whether a size is 0: a loop, not an array of the values of every Stock line's sizes. */
function hasZero(sizes: Record<string, unknown>): boolean {
  for (const size in sizes) if (Object.hasOwn(sizes, size) && sizes[size] === 0) return true;
  return false;
}

/**
 * The SourceMap of a built manifest: paths are the merged jobs' paths, but a value a job
 * got from `defaults` is located where it is written — in `defaults:` — not at the job.
 */
function manifestSourceMap(raw: SourceMap, doc: unknown): SourceMap {
  const where = (path: string): string => {
    const segments = parsePath(path);
    if (segments[0] !== 'jobs' || typeof segments[1] !== 'number' || segments.length < 3 || !isPlainObject(doc))
      return path;
    const rest = segments.slice(2);
    if (has(doc, segments)) return path;
    return has(doc, ['defaults', ...rest]) ? formatPath(['defaults', ...rest]) : path;
  };
  return {
    locate: (path) => raw.locate(where(path)),
    locateKey: (path) => (raw.locateKey ? raw.locateKey(where(path)) : raw.locate(where(path))),
  };
}

function has(doc: unknown, segments: PathSegment[]): boolean {
  let node = doc;
  for (const seg of segments) {
    if (Array.isArray(node) && typeof seg === 'number' && seg < node.length) node = node[seg];
    else if (isPlainObject(node) && typeof seg === 'string' && Object.hasOwn(node, seg)) node = node[seg];
    else return false;
  }
  return true;
}

/**
 * `defaults` deep-merged into a job: mappings merge key by key, the job's value wins, and
 * anything else (lists, text, numbers) is replaced whole — a job's `items` never gets the
 * default's items appended. A key named `__proto__` is an ordinary key (Object.fromEntries).
 */
export function mergeDefaults(defaults: unknown, job: unknown): unknown {
  if (!isPlainObject(defaults) || !isPlainObject(job)) return job === undefined ? defaults : job;
  const merged = new Map(Object.entries(defaults));
  for (const [key, value] of Object.entries(job)) {
    const base = merged.get(key);
    merged.set(key, isPlainObject(base) && isPlainObject(value) ? mergeDefaults(base, value) : value);
  }
  return Object.fromEntries(merged);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
