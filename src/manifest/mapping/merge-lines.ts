/**
 * After an expression mapping's rows are built into jobs: the problems of its expressions are
 * placed on their job and line (so one bad cell makes one order invalid, not the file), and the
 * lines of one order that name the same item are merged, quantities and sizes summed, so the
 * catalogue's minimums apply to the order's total (6 + 6 of an asset whose minimum is 10).
 *
 * Sizes belong on Stock lines only (the API takes sizeQuantities for Stock); a transfer (Asset,
 * PriceCode) line whose mapping gave it a size is ordered by its total quantity, and its sizes
 * are written into its comment (`sizes: M 6, L 6`) for the people who press the transfers.
 */
import { jobIndexOf } from '../field-path.js';
import type { Diagnostic } from '../model.js';
import type { RowProblem } from './mapped-rows.js';

type Obj = Record<string, unknown>;

/** Fields that must agree for two lines to be one. */
const SAME = [
  'itemType',
  'code',
  'variantCode',
  'garment',
  'customerReference',
  'groupHead',
  'group',
  'externalArtworkUrl',
  'artwork',
  'externalId',
  'isSample',
  'attributes',
] as const;

export interface MappedDocument {
  jobs: Obj[];
}

/** Each problem on its job (`jobs[j]`) and line (`jobs[j].items[k]`), found by order number and row. */
export function placeProblems(
  doc: MappedDocument | undefined,
  itemRows: number[][],
  problems: readonly RowProblem[],
): Diagnostic[] {
  const jobOf = new Map<string, number>();
  doc?.jobs.forEach((job, j) => {
    if (typeof job.orderNumber === 'string') jobOf.set(job.orderNumber, j);
  });
  return problems.map((p) => {
    const j = p.orderNumber === undefined ? undefined : jobOf.get(p.orderNumber);
    const k = j === undefined ? -1 : (itemRows[j]?.indexOf(p.row) ?? -1);
    const field = j === undefined ? undefined : k >= 0 ? `jobs[${j}].items[${k}]` : `jobs[${j}]`;
    return {
      severity: 'error',
      code: 'mapping.expression',
      message: `${p.target}: ${p.message}`,
      ...(field !== undefined ? { field } : {}),
      source: p.source,
    };
  });
}

/**
 * Merges the same item's lines within each job, in place; the lines of jobs a diagnostic names
 * are left where they are (their item indexes are in those messages). `sizesToComment`: the
 * mapping gives sizes.
 */
export function mergeLines(
  doc: MappedDocument,
  itemRows: number[][],
  diagnostics: readonly Diagnostic[],
  sizesToComment: boolean,
): Array<[number, number]> {
  const merged: Array<[number, number]> = [];
  const named = new Set(diagnostics.map((d) => jobIndexOf(d.field)));
  doc.jobs.forEach((job, j) => {
    if (!Array.isArray(job.items)) return;
    const items = job.items as Obj[];
    if (named.has(j)) {
      // A transfer's sizes go to its comment in place, which moves no line: a job with a problem
      // elsewhere is not also told that its transfer lines lack a quantity.
      if (sizesToComment) for (const item of items) sizesOnTransfer(item);
      return;
    }
    if (items.length < 2 && !sizesToComment) return;
    const rows = itemRows[j] ?? [];
    const kept: Obj[] = [];
    const keptRows: number[] = [];
    const byKey = new Map<string, Obj>();
    const rowOf = new Map<Obj, number>();
    items.forEach((item, k) => {
      const key = keyOf(item);
      const into = key === undefined ? undefined : byKey.get(key);
      if (into !== undefined && add(into, item)) {
        merged.push([rows[k], rowOf.get(into) ?? rows[k]]);
        return;
      }
      rowOf.set(item, rows[k]);
      // The reader's own objects, changed in place: nothing else holds them yet.
      if (key !== undefined) byKey.set(key, item);
      kept.push(item);
      keptRows.push(rows[k]);
    });
    if (sizesToComment) for (const item of kept) sizesOnTransfer(item);
    job.items = kept;
    itemRows[j] = keptRows;
  });
  return merged;
}

function keyOf(item: Obj): string | undefined {
  if (typeof item.code !== 'string') return undefined;
  let key = '';
  for (const f of SAME) {
    const v = item[f];
    // Attributes are an object; everything else is text, a number or a boolean.
    key += `${v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)}\u0000`;
  }
  return key;
}

/** Adds `item`'s quantities to `into`; false (nothing changed) when they cannot be summed. */
function add(into: Obj, item: Obj): boolean {
  const q1 = into.quantity;
  const q2 = item.quantity;
  const s1 = into.sizeQuantities as Obj | undefined;
  const s2 = item.sizeQuantities as Obj | undefined;
  if ((q1 === undefined) !== (q2 === undefined) || (s1 === undefined) !== (s2 === undefined)) return false;
  if (q1 !== undefined && (typeof q1 !== 'number' || typeof q2 !== 'number')) return false;
  if (s1 !== undefined && s2 !== undefined) {
    const all = [...Object.values(s1), ...Object.values(s2)];
    if (!all.every((n) => typeof n === 'number')) return false;
  }
  if (typeof q1 === 'number' && typeof q2 === 'number') into.quantity = q1 + q2;
  if (s1 !== undefined && s2 !== undefined) {
    const sum: Obj = { ...s1 };
    for (const [size, n] of Object.entries(s2)) sum[size] = ((sum[size] as number | undefined) ?? 0) + (n as number);
    into.sizeQuantities = sum;
  }
  if (typeof item.comment === 'string' && item.comment !== into.comment) {
    into.comment = typeof into.comment === 'string' ? `${into.comment}; ${item.comment}` : item.comment;
  }
  return true;
}

/** A transfer line with sizes: ordered by its total, the sizes written into its comment. */
function sizesOnTransfer(item: Obj): void {
  if (item.itemType === 'Stock' || item.sizeQuantities === undefined || item.quantity !== undefined) return;
  const sizes = Object.entries(item.sizeQuantities as Obj);
  if (!sizes.every(([, n]) => typeof n === 'number')) return;
  item.quantity = sizes.reduce((sum, [, n]) => sum + (n as number), 0);
  const note = `sizes: ${sizes.map(([s, n]) => `${s} ${String(n)}`).join(', ')}`;
  item.comment = typeof item.comment === 'string' ? `${item.comment}; ${note}` : note;
  delete item.sizeQuantities;
}
