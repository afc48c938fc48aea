/**
 * Source locations for a CSV document, computed on demand from compact tables instead of
 * one location object per value (a million-row file would need millions of them):
 * - an item's row: `itemRows[job][item]` (item-rows.ts);
 * - a job-level field's row: the first row of the job that set it (`slotRows`), else the
 *   job's first row;
 * - a column name: field → the ORIGINAL file's column (for ERP input, the ERP's own name);
 * - a value that came from a mapping constant: where the mapping wrote it.
 */
import type { CsvOrigin, FieldPath, SourceLocation, SourceMap } from '../model.js';
import { parsePath } from '../field-path.js';
import { itemRowOf } from './item-rows.js';
import type { FieldRowLookup } from './row-tables.js';
import { JOB_FIELDS } from './column-plan.js';
import { ATTR_PREFIX, SIZE_PREFIX } from './template.js';

/** What a CSV document's locations are computed from (the document builder's result). */
export interface CsvSourceTables {
  headerRow: number;
  /** Its item rows (read through item-rows.ts, so the arrays are not made for this). */
  csv: CsvOrigin;
  /** Per job, per job/address field slot: the row that set it, 0 = not set by a row. */
  slotRows: FieldRowLookup;
  /** Job/address field → its slot in slotRows. */
  jobSlots: ReadonlyMap<string, number>;
  /** Template target → original column name. */
  fieldColumns: ReadonlyMap<string, string>;
  /** Template target → mapping location of its constant. */
  constantLocations: ReadonlyMap<string, SourceLocation>;
}

export function csvSourceMap(file: string, t: CsvSourceTables): SourceMap {
  const header: SourceLocation = { file, row: t.headerRow };

  /** The location of `target` on `row`: its column, or the mapping constant, or the row alone. */
  const at = (row: number, target: string | undefined): SourceLocation => {
    if (target === undefined) return { file: file, row };
    const columnName = t.fieldColumns.get(target);
    if (columnName !== undefined) return { file: file, row, columnName };
    const constant = t.constantLocations.get(target);
    if (constant !== undefined) return constant;
    return { file: file, row };
  };

  return {
    locate(path: FieldPath): SourceLocation {
      const p = parsePath(path);
      if (p[0] !== 'jobs' || typeof p[1] !== 'number') return header;
      const j = p[1];
      // A job's row is its first item's; a job without item rows has only the header.
      const jobRow = itemRowOf(t.csv, j, 0);
      if (jobRow === undefined) return header;
      const rest = p.slice(2);
      if (rest.length === 0) return { file: file, row: jobRow };

      if (rest[0] === 'items') {
        if (typeof rest[1] !== 'number') return { file: file, row: jobRow };
        const row = itemRowOf(t.csv, j, rest[1]) ?? jobRow;
        const field = rest[2];
        if (field === undefined || typeof field === 'number') return { file: file, row };
        if (field === 'attributes') {
          return rest[3] === undefined ? { file: file, row } : at(row, ATTR_PREFIX + String(rest[3]));
        }
        if (field === 'sizeQuantities') {
          // A size may come from its own size:CODE column or from the sizeQuantities cell.
          const own = rest[3] === undefined ? undefined : SIZE_PREFIX + String(rest[3]);
          if (own !== undefined && (t.fieldColumns.has(own) || t.constantLocations.has(own))) return at(row, own);
          if (t.fieldColumns.has('sizeQuantities') || t.constantLocations.has('sizeQuantities'))
            return at(row, 'sizeQuantities');
          const anySize = [...t.fieldColumns.keys()].find((k) => k.startsWith(SIZE_PREFIX));
          return at(row, anySize);
        }
        return at(row, field);
      }

      const field = String(rest[0] === 'deliveryAddress' ? (rest[1] ?? 'deliveryAddress') : rest[0]);
      const slot = t.jobSlots.get(field);
      const setRow = slot === undefined ? 0 : t.slotRows.get(j, slot);
      return at(setRow > 0 ? setRow : jobRow, JOB_FIELDS.has(field) ? field : undefined);
    },
  };
}
