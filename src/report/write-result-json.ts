import { itemsPending, peekItems } from './lazy-items.js';
import type { ItemResult, JobResult, ResultReport } from './model.js';
import { writeAtomicStream } from './atomic-stream.js';
import type { NewFileOptions } from '../storage/atomic-write.js';

/**
 * Writes X.result.json atomically. Jobs are serialised a batch at a time, so a manifest with
 * a million items never becomes one giant string in memory, and items not yet built are
 * serialised from transient copies rather than built and kept (lazy-items.ts).
 */
export async function writeResultJson(path: string, report: ResultReport, file?: NewFileOptions): Promise<void> {
  await writeAtomicStream(path, resultJsonChunks(report), file);
}

/** Jobs per JSON.stringify call: big enough to amortise the call, small enough to stay young garbage. */
const BATCH_JOBS = 64;

/** The same text as `JSON.stringify(report, null, 2) + '\n'`, in pieces. */
export function* resultJsonChunks(report: ResultReport): Generator<string> {
  const { jobs, ...head } = report;
  const text = JSON.stringify(head, null, 2);
  yield `${text.slice(0, text.lastIndexOf('\n}'))},\n  "jobs": [`;
  for (let from = 0; from < jobs.length; from += BATCH_JOBS) {
    const batch = jobs.slice(from, from + BATCH_JOBS);
    // Wrapped as the report wraps them, the jobs come out indented exactly as in the whole
    // report: `{\n  "jobs": [\n` + jobs + `\n  ]\n}`. Items not built yet are written by
    // itemsJson in their place (PLACEHOLDER) rather than built as objects and stringified.
    const wrapped = JSON.stringify({ jobs: batch.map(jobView) }, null, 2);
    const parts = wrapped.slice(WRAP_HEAD.length, wrapped.length - WRAP_TAIL.length).split(PLACEHOLDER_TEXT);
    // Yielded piece by piece: the writer encodes each into its buffer at once, so no piece
    // (nor a joined batch, which at ~150 KB would be born in the old generation) outlives
    // a young-generation collection.
    yield from === 0 ? '\n' : ',\n';
    yield parts[0];
    let p = 1;
    for (const job of batch) {
      if (!itemsPending(job)) continue;
      yield `\n${JOB_KEY_INDENT}"items": `;
      yield itemsJson(peekItems(job));
      if (p >= parts.length) throw new Error('result.json: item placeholders out of step'); // cannot happen: see PLACEHOLDER_TEXT
      yield parts[p++];
    }
    if (p !== parts.length) throw new Error('result.json: item placeholders out of step');
  }
  yield jobs.length === 0 ? ']\n}\n' : '\n  ]\n}\n';
}

const WRAP_HEAD = '{\n  "jobs": [\n';
const WRAP_TAIL = '\n  ]\n}';
/** Indentation of a job's own keys, and of its items' braces and keys. */
const JOB_KEY_INDENT = ' '.repeat(6);
const ITEM_INDENT = ' '.repeat(8);
const ITEM_KEY_INDENT = ' '.repeat(10);
/**
 * Stands in for a job's items that are not built. Its text can only occur as a job's own
 * `items` key (six spaces in, after a newline): a string value containing a NUL and
 * "pending" is escaped differently, and nested keys are indented further.
 */
const PLACEHOLDER = '\u0000pending';
const PLACEHOLDER_TEXT = `\n${JOB_KEY_INDENT}"items": ${JSON.stringify(PLACEHOLDER)}`;

/** The job itself once its items are built; otherwise a copy (same keys, same order) with the placeholder. */
function jobView(job: JobResult): unknown {
  if (!itemsPending(job)) return job;
  const view: Record<string, unknown> = {};
  for (const key of Object.keys(job))
    view[key] = key === 'items' ? PLACEHOLDER : (job as unknown as Record<string, unknown>)[key];
  return view;
}

/** A job's items as JSON.stringify(items, null, 2) writes them at this depth, without the generic walk. */
export function itemsJson(items: readonly ItemResult[]): string {
  if (items.length === 0) return '[]';
  const I = ITEM_KEY_INDENT;
  // One string built by concatenation (a rope V8 flattens once) rather than an array per item.
  let out = '[';
  for (let k = 0; k < items.length; k++) {
    const i = items[k];
    out +=
      `${k === 0 ? '' : ','}\n${ITEM_INDENT}{` +
      `\n${I}"index": ${numberJson(i.index)},` +
      `\n${I}"source": ${sourceJson(i.source)},` +
      `\n${I}"itemType": ${stringJson(i.itemType)},` +
      `\n${I}"code": ${stringJson(i.code)},` +
      `\n${I}"quantity": ${numberJson(i.quantity)},` +
      `\n${I}"status": ${stringJson(i.status)},` +
      `\n${I}"newAssetSku": ${stringJson(i.newAssetSku)},` +
      `\n${I}"needsArtworkToBeUploaded": ${JSON.stringify(i.needsArtworkToBeUploaded)},` +
      `\n${I}"errors": ${nested(i.errors)}` +
      `\n${ITEM_INDENT}}`;
  }
  return `${out}\n${JOB_KEY_INDENT}]`;
}

/** JSON of a number as JSON.stringify writes it (a finite number prints as in JS). */
function numberJson(value: number | null): string {
  return typeof value === 'number' && Number.isFinite(value) ? `${value}` : JSON.stringify(value);
}

/**
 * JSON of a string (or null), remembered: item types, codes and statuses repeat across a big
 * manifest's items, and quoting each again was most of the writer's time. Bounded.
 */
const quoted = new Map<string, string>();
const QUOTED_MAX = 4096;
function stringJson(value: string | null): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  let text = quoted.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    if (quoted.size < QUOTED_MAX) quoted.set(value, text);
  }
  return text;
}

function sourceJson(source: ItemResult['source']): string {
  if (source !== null && 'row' in source && onlyKey(source)) {
    return `{\n${ITEM_KEY_INDENT}  "row": ${JSON.stringify(source.row)}\n${ITEM_KEY_INDENT}}`;
  }
  return nested(source);
}

/** Whether the object has exactly one own enumerable key (without Object.keys' array per item). */
function onlyKey(object: object): boolean {
  let n = 0;
  for (const key in object) if (Object.hasOwn(object, key) && ++n > 1) return false;
  return n === 1;
}

/** Any other value at an item key's depth. */
function nested(value: unknown): string {
  if (Array.isArray(value) && value.length === 0) return '[]';
  return JSON.stringify(value, null, 2).replace(/\n/g, `\n${ITEM_KEY_INDENT}`);
}
