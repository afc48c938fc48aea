import { itemsPending, peekItems } from './lazy-items.js';
import type { ItemResult, JobResult, ResultReport } from './model.js';
import { ByteOutput } from './byte-output.js';
import { type NewFileOptions, writeFileAtomic } from '../storage/atomic-write.js';
import { BATCH_JOBS, type EncodedBatches } from './encoded-batches.js';
import { changeClock } from './job-changes.js';

/**
 * Writes X.result.json atomically. Jobs are serialised a batch at a time, so a manifest with
 * a million items never becomes one giant string in memory, and items not yet built are
 * serialised from transient copies rather than built and kept (lazy-items.ts).
 */
export async function writeResultJson(
  path: string,
  report: ResultReport,
  file?: NewFileOptions,
  cache?: EncodedBatches,
): Promise<void> {
  await writeFileAtomic(path, resultJsonChunks(report, cache), file);
}

/** Bytes gathered per chunk handed to the writer: one write each, other events run between two. */
const CHUNK_BYTES = 64 << 10;

/**
 * The same bytes as `JSON.stringify(report, null, 2) + '\n'` in UTF-8, 64 kB at a
 * time (each chunk valid until the next is asked for). Items not built yet (most of the text:
 * 96 of a 300,000-row input's 115 MB) are written as bytes by itemsJson; the rest is text.
 * With a cache (a report rewritten as outcomes arrive), a batch of jobs none of which changed
 * since its bytes were kept is copied from them; the head is encoded every time.
 */
export function* resultJsonChunks(report: ResultReport, cache?: EncodedBatches): Generator<Uint8Array> {
  const out = new ByteOutput();
  const { jobs, ...head } = report;
  const text = JSON.stringify(head, null, 2);
  out.text(`${text.slice(0, text.lastIndexOf('\n}'))},\n  "jobs": [`);
  cache?.begin(report);
  for (let from = 0; from < jobs.length; from += BATCH_JOBS) {
    out.text(from === 0 ? '\n' : ',\n');
    const to = Math.min(from + BATCH_JOBS, jobs.length);
    const kept = cache?.get(report, from, to);
    if (kept !== undefined) out.bytes(kept);
    else {
      // The clock is read before the batch is encoded (synchronously): a job changed later is newer than the bytes.
      const clock = changeClock(report);
      const start = out.length;
      batchJson(jobs.slice(from, to), out);
      if (cache?.keeping) cache.put(from, to, clock, out.copyFrom(start));
    }
    if (out.length >= CHUNK_BYTES) yield out.flush();
  }
  out.text(jobs.length === 0 ? ']\n}\n' : '\n  ]\n}\n');
  yield out.flush();
}

/** A batch of jobs as they appear in the whole report's JSON, without the separator before it. */
function batchJson(batch: JobResult[], out: ByteOutput): void {
  // Wrapped as the report wraps them, the jobs come out indented exactly as in the whole
  // report: `{\n  "jobs": [\n` + jobs + `\n  ]\n}`. Items not built yet are written by
  // itemsJson in their place (PLACEHOLDER) rather than built as objects and stringified.
  const wrapped = JSON.stringify({ jobs: batch.map(jobView) }, null, 2);
  const parts = wrapped.slice(WRAP_HEAD.length, wrapped.length - WRAP_TAIL.length).split(PLACEHOLDER_TEXT);
  out.text(parts[0]);
  let p = 1;
  for (const job of batch) {
    if (!itemsPending(job)) continue;
    out.bytes(ITEMS_KEY);
    itemsJson(peekItems(job), out);
    if (p >= parts.length) throw new Error('result.json: item placeholders out of step'); // cannot happen: see PLACEHOLDER_TEXT
    out.text(parts[p++]);
  }
  if (p !== parts.length) throw new Error('result.json: item placeholders out of step');
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

const ascii = (text: string): Buffer => Buffer.from(text, 'latin1');
const ITEMS_KEY = ascii(`\n${JOB_KEY_INDENT}"items": `);
/** The fixed text between an item's values: keys, indentation, braces. */
const FIRST_ITEM = ascii(`[\n${ITEM_INDENT}{\n${ITEM_KEY_INDENT}"index": `);
const NEXT_ITEM = ascii(`,\n${ITEM_INDENT}{\n${ITEM_KEY_INDENT}"index": `);
const SOURCE_KEY = ascii(`,\n${ITEM_KEY_INDENT}"source": `);
const ROW_OPEN = ascii(`{\n${ITEM_KEY_INDENT}  "row": `);
const ROW_CLOSE = ascii(`\n${ITEM_KEY_INDENT}}`);
const ITEM_TYPE_KEY = ascii(`,\n${ITEM_KEY_INDENT}"itemType": `);
const CODE_KEY = ascii(`,\n${ITEM_KEY_INDENT}"code": `);
const QUANTITY_KEY = ascii(`,\n${ITEM_KEY_INDENT}"quantity": `);
const STATUS_KEY = ascii(`,\n${ITEM_KEY_INDENT}"status": `);
const SKU_KEY = ascii(`,\n${ITEM_KEY_INDENT}"newAssetSku": `);
const NEEDS_KEY = ascii(`,\n${ITEM_KEY_INDENT}"needsArtworkToBeUploaded": `);
const ERRORS_KEY = ascii(`,\n${ITEM_KEY_INDENT}"errors": `);
const ITEM_CLOSE = ascii(`\n${ITEM_INDENT}}`);
const ITEMS_CLOSE = ascii(`\n${JOB_KEY_INDENT}]`);
const EMPTY_LIST = ascii('[]');
const NULL = ascii('null');
const TRUE = ascii('true');
const FALSE = ascii('false');
// The common runs joined, so most items take seven copies: a row-only source, and an item
// with nothing but its own fields yet (no asset SKU, no artwork flag, no errors).
const join = (...parts: Buffer[]): Buffer => Buffer.concat(parts);
const SOURCE_ROW = join(SOURCE_KEY, ROW_OPEN);
const ROW_ITEM_TYPE = join(ROW_CLOSE, ITEM_TYPE_KEY);
const NOTHING_YET = join(SKU_KEY, NULL, NEEDS_KEY, NULL, ERRORS_KEY, EMPTY_LIST, ITEM_CLOSE);

/**
 * A job's items as JSON.stringify(items, null, 2) writes them at this depth, without the
 * generic walk, and as bytes: the fixed text is copied, numbers written as digits, strings as
 * their remembered JSON. Anything unusual (a nested value) goes through JSON.stringify.
 */
export function itemsJson(items: readonly ItemResult[], out: ByteOutput): void {
  if (items.length === 0) {
    out.bytes(EMPTY_LIST);
    return;
  }
  for (let k = 0; k < items.length; k++) {
    const i = items[k];
    out.bytes(k === 0 ? FIRST_ITEM : NEXT_ITEM);
    numberJson(i.index, out);
    const source = i.source;
    if (source !== null && 'row' in source && onlyKey(source)) {
      out.bytes(SOURCE_ROW);
      numberJson(source.row, out);
      out.bytes(ROW_ITEM_TYPE);
    } else {
      out.bytes(SOURCE_KEY);
      out.text(nested(source));
      out.bytes(ITEM_TYPE_KEY);
    }
    stringJson(i.itemType, out);
    out.bytes(CODE_KEY);
    stringJson(i.code, out);
    out.bytes(QUANTITY_KEY);
    numberJson(i.quantity, out);
    out.bytes(STATUS_KEY);
    stringJson(i.status, out);
    const needs = i.needsArtworkToBeUploaded;
    if (i.newAssetSku === null && needs === null && Array.isArray(i.errors) && i.errors.length === 0) {
      out.bytes(NOTHING_YET);
      continue;
    }
    out.bytes(SKU_KEY);
    stringJson(i.newAssetSku, out);
    out.bytes(NEEDS_KEY);
    if (needs === null) out.bytes(NULL);
    else if (needs === true) out.bytes(TRUE);
    else if (needs === false) out.bytes(FALSE);
    else out.text(`${JSON.stringify(needs)}`);
    out.bytes(ERRORS_KEY);
    if (Array.isArray(i.errors) && i.errors.length === 0) out.bytes(EMPTY_LIST);
    else out.text(nested(i.errors));
    out.bytes(ITEM_CLOSE);
  }
  out.bytes(ITEMS_CLOSE);
}

/** JSON of a number as JSON.stringify writes it (a finite number prints as in JS; `undefined` as the text would). */
function numberJson(value: number | null, out: ByteOutput): void {
  if (typeof value === 'number' && value >= 0 && Number.isSafeInteger(value)) out.digits(value);
  else out.text(`${typeof value === 'number' && Number.isFinite(value) ? `${value}` : JSON.stringify(value)}`);
}

/**
 * JSON of a string (or null), remembered as bytes: item types, codes and statuses repeat across
 * a big manifest's items, and quoting each again was most of the writer's time. Bounded.
 */
const quoted = new Map<string, Buffer>();
const QUOTED_MAX = 4096;
function stringJson(value: string | null, out: ByteOutput): void {
  if (typeof value !== 'string') {
    if (value === null) out.bytes(NULL);
    else out.text(`${JSON.stringify(value)}`);
    return;
  }
  const known = quoted.get(value);
  if (known !== undefined) out.bytes(known);
  else if (quoted.size < QUOTED_MAX) {
    const text = Buffer.from(JSON.stringify(value), 'utf8');
    quoted.set(value, text);
    out.bytes(text);
  } else out.text(JSON.stringify(value));
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
