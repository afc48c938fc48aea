/**
 * An expression mapping (docs/mappings.md#expressions) between the CSV scanner and the template
 * builder: each export row is filled down, tested against the skip rules, and turned into a row
 * of the default template (one cell per mapped field), which the builder then reads like any
 * CSV. Row numbers stay the export's; messages name the export's columns (`columnLabels`).
 *
 * Expressions may be asynchronous (JSONata), the scanner is not: records are queued as they are
 * scanned and `drain()` maps them, in order, between chunks.
 */
import { basename, dirname, resolve } from 'node:path';
import type { CsvScanHandlers } from '../csv/csv-scanner.js';
import type { CsvOrigin, CsvRead, Diagnostic, SkippedRows, SourceLocation } from '../model.js';
import {
  type CompiledExpression,
  compileExpression,
  type ExpressionValue,
  type NumberStyle,
  type RowInput,
} from './expressions.js';
import { type MappedDocument, mergeLines, placeProblems } from './merge-lines.js';
import type { Mapping } from './model.js';
import { selectVariant } from './preset-columns.js';
import { didYouMeanName } from '../../core/suggest.js';
import { COLUMN_NAME_MATCHING } from '../csv/template.js';
import { PRESETS_DIR } from './presets-dir.js';
import { zerosRestored } from '../rules/excel-damage.js';

/** An expression that failed on a row, placed on its job and item once the document is built. */
export interface RowProblem {
  row: number;
  orderNumber?: string;
  target: string;
  message: string;
  source: SourceLocation;
}

interface Field {
  target: string;
  expr: CompiledExpression;
  /** Where the mapping wrote it. */
  at?: SourceLocation;
}

/** An expression that failed on a row: its message. */
class Failure {
  constructor(readonly message: string) {}
}

type Outcome = ExpressionValue | Failure;

const failed = (err: unknown): Failure => new Failure((err as Error).message ?? String(err));

interface Rule {
  expr: CompiledExpression;
  scope: 'row' | 'order';
  reason: string;
  at?: SourceLocation;
}

const quote = (column: string): string => `\`${column}\``;

/**
 * Where the template rows go (the document builder). `cellRows[i]`, when given, is the export
 * row template cell `i` was written on, for a value filled down from a row above.
 */
export interface TemplateRows {
  header(cells: string[], row: number): void;
  record(cells: string[], row: number, cellRows?: readonly number[]): void;
}

/**
 * Lines one row may give through `lines`: every line costs each expression of the mapping, and
 * a cell is written by whoever made the export; no order packs a thousand products into a row.
 */
const MAX_LINES_PER_ROW = 1_000;

export class MappedRows implements CsvScanHandlers {
  /** The template-shaped header handed to the builder. */
  targets: string[] = [];
  /** The mapping the builder reads the template rows with: constants, values and labels only. */
  readonly builderMapping: Mapping;
  private readonly skipped: SkippedRows[] = [];
  private readonly problems: RowProblem[] = [];
  /** Filled-down values already found wrong (row written on, field): each is reported once, not per row using it. */
  private readonly filledProblems = new Set<string>();
  private readonly diagnostics: Diagnostic[] = [];
  /** The export's header as read. */
  private exportHeader: string[] = [];
  private fields: Field[] = [];
  private rules: Rule[] = [];
  private sizeField?: Field;
  /** A mapping's `lines`: one row → several lines. */
  private linesField?: Field;
  private quantitySlot = -1;
  private sizesSlot = -1;
  private orderSlot = -1;
  private names: string[] = [];
  private fillIndexes: number[] = [];
  /** Per fillDown column (as fillIndexes): the row its value on the row being mapped is written on. */
  private fillRows: number[] = [];
  /** Per field: the fillDown columns its expression reads (positions in fillIndexes). */
  private fieldFills: number[][] = [];
  private keyIndex = -1;
  private previous: string[] | undefined;
  private queue: Array<{ cells: string[]; row: number }> = [];
  private readonly skippedOrders = new Map<string, SkippedRows>();
  private readonly startedOrders = new Map<string, number>();
  /** Every expression of a row, in order: fields, skip rules, then size. */
  private exprs: CompiledExpression[] = [];
  private results: Array<Outcome | Promise<Outcome>> = [];
  /** Cells an expression's input needs: the columns they name, or every column. */
  private inputIndexes: number[] = [];
  private absentOptional: string[] = [];
  /** zeroPaddedColumns found in the header: where each is, and its width. */
  private padded: Array<{ index: number; width: number; column: string }> = [];
  /** Values of those columns already warned about (column index, cell): once per order, not per row. */
  private readonly restored = new Set<string>();
  /** Rows the export has, skipped or not. */
  private rowsRead = 0;
  /**
   * The mapping names columns the header lacks: no row can be read through it, and none is
   * judged by its skip rules (every cell they read would be blank).
   */
  private unfit = false;

  /** How the file writes numbers, known with its header; every expression of this file reads by it. */
  private readonly numbers: NumberStyle = { decimalComma: false };
  /** The mapping as read for this file: its variant applied once the header is known. */
  private active: Mapping;
  /** The variant of the export the header showed, when the mapping has variants. */
  variant?: string;

  constructor(
    private readonly file: string,
    private readonly mapping: Mapping,
    private readonly sink: TemplateRows,
  ) {
    const { constants, values, constantLocations, file: mappingFile } = mapping;
    this.builderMapping = { constants, values, constantLocations, file: mappingFile, columnLabels: {} };
    this.active = mapping;
    this.setup(mapping);
  }

  /** Compiles the mapping's expressions (again, when the header chose a variant). */
  private setup(mapping: Mapping): void {
    const tables = mapping.lookupTables ?? {};
    const where = (key: string): SourceLocation | undefined => mapping.expressionLocations?.[key];
    const fields: Field[] = [];
    const compile = (source: string, sequence = false) => compileExpression(source, tables, sequence, this.numbers);
    const add = (target: string, source: string, at?: SourceLocation) => {
      fields.push({ target, expr: compile(source), at });
    };
    for (const [column, target] of Object.entries(mapping.columns ?? {})) add(target, quote(column));
    for (const [column, size] of Object.entries(mapping.sizeColumns ?? {})) add(`size:${size}`, quote(column));
    for (const [column, name] of Object.entries(mapping.attributeColumns ?? {})) add(`attr:${name}`, quote(column));
    for (const [target, source] of Object.entries(mapping.fields ?? {})) add(target, source, where(`fields.${target}`));
    this.sizeField = fields.find((f) => f.target === 'size');
    this.fields = fields.filter((f) => f.target !== 'size');
    if (this.sizeField !== undefined && !this.fields.some((f) => f.target === 'sizeQuantities')) {
      this.fields.push({ target: 'sizeQuantities', expr: compile('""') });
    }
    this.linesField =
      mapping.lines === undefined
        ? undefined
        : { target: 'lines', expr: compile(mapping.lines, true), at: where('lines') };
    this.rules = (mapping.skip ?? []).map((r, i) => ({
      expr: compile(r.when),
      scope: r.scope ?? 'row',
      reason: r.reason,
      at: where(`skip[${i}]`),
    }));
    this.targets = this.fields.map((f) => f.target);
    this.exprs = [
      ...this.fields.map((f) => f.expr),
      ...this.rules.map((r) => r.expr),
      ...(this.sizeField ? [this.sizeField.expr] : []),
    ];
    this.results = new Array<Outcome | Promise<Outcome>>(this.exprs.length);
    this.quantitySlot = this.targets.indexOf('quantity');
    this.sizesSlot = this.targets.indexOf('sizeQuantities');
    this.orderSlot = this.targets.indexOf('orderNumber');
    const columnLabels = this.builderMapping.columnLabels ?? {};
    for (const key of Object.keys(columnLabels)) delete columnLabels[key];
    for (const f of this.fields) {
      const label = f.expr.column ?? f.expr.label ?? f.expr.columns[0];
      if (label !== undefined) columnLabels[f.target] = label;
    }
    if (this.sizeField !== undefined) {
      columnLabels.sizeQuantities ??=
        this.sizeField.expr.columns[0] ?? columnLabels.quantity ?? this.sizeField.expr.source;
    }
  }

  header(cells: string[], row: number, read?: CsvRead): void {
    // A `;`-separated file comes from a spreadsheet whose decimal mark is `,`. A workbook's sheet
    // comes with no dialect read: its number cells read as plain numbers (`2.5`).
    this.numbers.decimalComma = read?.delimiter === ';';
    this.numbers.plainNumbers = read === undefined;
    this.exportHeader = cells;
    this.names = cells.map((c) => c.trim());
    const chosen = selectVariant(this.mapping, this.names);
    if (chosen.variant !== undefined) {
      this.variant = chosen.variant;
      this.active = chosen.mapping;
      this.setup(chosen.mapping);
    }
    const optional = new Set(this.active.optionalColumns ?? []);
    const indexOf = new Map<string, number>();
    this.names.forEach((n, i) => {
      if (n !== '' && !indexOf.has(n)) indexOf.set(n, i);
    });
    const used = new Set<string>();
    const check = unknownColumns(
      { file: this.file, mappingFile: this.mapping.file, row, indexOf, optional, used },
      this.diagnostics,
    );
    for (const f of this.fields) {
      f.expr.bind(indexOf);
      check(f.expr.columns, f.at, `fields.${f.target}`);
    }
    if (this.sizeField) {
      this.sizeField.expr.bind(indexOf);
      check(this.sizeField.expr.columns, this.sizeField.at, 'fields.size');
    }
    this.rules.forEach((r, i) => {
      r.expr.bind(indexOf);
      check(r.expr.columns, r.at, `skip[${i}]`);
    });
    if (this.linesField) {
      this.linesField.expr.bind(indexOf);
      check(this.linesField.expr.columns, this.linesField.at, 'lines');
    }
    const fill = this.active.fillDown;
    if (fill !== undefined) {
      const at = this.active.expressionLocations?.fillDown;
      check(fill.columns, at, 'fillDown');
      this.fillIndexes = fill.columns.map((c) => indexOf.get(c) ?? -1).filter((i) => i >= 0);
      if (fill.key !== undefined) {
        check([fill.key], at, 'fillDown.key');
        this.keyIndex = indexOf.get(fill.key) ?? -1;
      }
      const filled = this.fillIndexes.map((i) => this.names[i]);
      this.fieldFills = this.fields.map((f) => f.expr.columns.map((c) => filled.indexOf(c)).filter((k) => k >= 0));
    }
    const zeroPadded = Object.entries(this.active.zeroPaddedColumns ?? {});
    check(
      zeroPadded.map(([c]) => c),
      this.active.expressionLocations?.zeroPaddedColumns,
      'zeroPaddedColumns',
    );
    this.padded = zeroPadded.flatMap(([column, width]) => {
      const index = indexOf.get(column);
      return index === undefined ? [] : [{ index, width, column }];
    });
    const ignored = new Set(this.active.ignoreColumns ?? []);
    check([...ignored], this.active.expressionLocations?.ignoreColumns, 'ignoreColumns');
    for (const c of optional) used.add(c);
    if (this.active.ignoreUnmapped !== true) this.reportUnmapped(row, used, ignored);
    this.unfit = this.diagnostics.some((d) => d.code === 'mapping.unknown-column');
    // JSONata sees only the cells some expression names, unless one reads the whole row ($, *).
    const exprs = this.linesField === undefined ? this.exprs : [...this.exprs, this.linesField.expr];
    const all = exprs.some((e) => !e.cacheable);
    const named = new Set(exprs.flatMap((e) => e.columns));
    this.inputIndexes = this.names.flatMap((n, i) => (n !== '' && (all || named.has(n)) ? [i] : []));
    // An absent optional column reads as a blank cell, for expressions that read the whole row too.
    this.absentOptional = [...optional].filter((c) => !indexOf.has(c));
    this.sink.header(this.targets, row);
  }

  /** Each column of the header neither used by the mapping nor ignored: an error at the header. */
  private reportUnmapped(row: number, used: ReadonlySet<string>, ignored: ReadonlySet<string>): void {
    for (const name of this.names) {
      if (name === '' || used.has(name) || ignored.has(name)) continue;
      this.diagnostics.push({
        severity: 'error',
        code: 'csv.unmapped-column',
        message:
          `column "${name}" is not mapped; use it in fields${this.mapping.file ? ` of ${this.mapping.file}` : ''}, ` +
          'list it in ignoreColumns, or set ignoreUnmapped: true',
        source: { file: this.file, row, columnName: name },
      });
    }
  }

  record(cells: string[], row: number): void {
    this.rowsRead += 1;
    if (this.unfit) return;
    if (this.mapping.unguard !== undefined) unguard(cells, this.mapping.unguard);
    if (this.padded.length > 0) this.restoreZeros(cells, row);
    this.queue.push({ cells, row });
  }

  /** The leading zeros a spreadsheet dropped from the zeroPaddedColumns' cells, put back in place and warned about. */
  private restoreZeros(cells: string[], row: number): void {
    const at = this.active.expressionLocations?.zeroPaddedColumns;
    for (const { index, width, column } of this.padded) {
      const cell = cells[index] ?? '';
      const fix = zerosRestored(cell, width, column, at === undefined ? 'zeroPaddedColumns' : writtenAt(at));
      if (fix === undefined) continue;
      cells[index] = fix.value;
      if (this.restored.has(`${index}\0${cell}`)) continue;
      this.restored.add(`${index}\0${cell}`);
      this.diagnostics.push({
        severity: 'warning',
        code: 'mapping.leading-zeros',
        message: fix.message,
        source: { file: this.file, row, columnName: column },
      });
    }
  }

  /** Maps the queued records, in order, into the builder. */
  async drain(): Promise<void> {
    const queue = this.queue;
    this.queue = [];
    for (const { cells, row } of queue) {
      const pending = this.map(this.filled(cells, row), row);
      if (pending !== undefined) await pending;
    }
  }

  /**
   * Blank order-level cells of a continuation row come from the row above; filled in place (the
   * scanner hands each record over once). Each filled cell keeps the row it is written on
   * (`fillRows`), so what is found in its value points there.
   */
  private filled(cells: string[], row: number): string[] {
    const fills = this.fillIndexes;
    if (fills.length === 0) return cells;
    const prev = this.previous;
    const key = this.keyIndex < 0 ? '' : (cells[this.keyIndex] ?? '').trim();
    const same = prev !== undefined && (key === '' || key === (prev[this.keyIndex] ?? '').trim());
    for (let k = 0; k < fills.length; k++) {
      const i = fills[k];
      if (same && (cells[i] ?? '').trim() === '' && (prev[i] ?? '') !== '') cells[i] = prev[i];
      else this.fillRows[k] = row;
    }
    this.previous = cells;
    return cells;
  }

  /** The row field `f`'s value is written on: that of the first filled-down column it reads, else `row`. */
  private rowOf(f: number, row: number): number {
    for (const k of this.fieldFills[f] ?? []) if (this.fillRows[k] !== row) return this.fillRows[k];
    return row;
  }

  /** Per template cell, the row it is written on when some came from another row; else undefined. */
  private cellRows(row: number): number[] | undefined {
    let rows: number[] | undefined;
    for (let f = 0; f < this.fields.length; f++) {
      const at = this.rowOf(f, row);
      if (at === row) continue;
      rows ??= new Array<number>(this.fields.length).fill(0);
      rows[f] = at;
    }
    return rows;
  }

  /**
   * Evaluates every expression of the row (fields, skip rules, size); synchronous when each is a
   * rename or a cache hit, which is almost every row, so the row costs no promise at all.
   */
  private map(cells: string[], row: number): Promise<void> | undefined {
    const lines = this.linesField;
    if (lines === undefined) return this.mapLine(cells, row, undefined);
    let v: Outcome | Promise<Outcome>;
    try {
      const r = lines.expr.evaluate(cells, this.rowInput(cells));
      v = r instanceof Promise ? r.then(undefined, failed) : r;
    } catch (err) {
      v = failed(err);
    }
    return v instanceof Promise ? v.then((done) => this.mapLines(cells, row, done)) : this.mapLines(cells, row, v);
  }

  /** The lines a row's `lines` gave, each mapped as a row of its own (same row number). */
  private async mapLines(cells: string[], row: number, value: Outcome): Promise<void> {
    if (value instanceof Failure) {
      const where = whereWritten(this.linesField?.at);
      this.diagnostics.push({
        severity: 'error',
        code: 'mapping.expression',
        message: `lines: ${value.message}${where}`,
        source: { file: this.file, row },
      });
      return;
    }
    const lines = (Array.isArray(value) ? (value as unknown[]) : [value]).filter(
      (l) => l !== undefined && l !== null && l !== '',
    );
    if (lines.length > MAX_LINES_PER_ROW) {
      this.diagnostics.push({
        severity: 'error',
        code: 'mapping.expression',
        message: `lines: the row gives ${lines.length} lines, more than the ${MAX_LINES_PER_ROW} one row may give`,
        source: { file: this.file, row },
      });
      return;
    }
    if (lines.length === 0) {
      this.skipped.push({ reason: "no order line in this row (the mapping's lines)", scope: 'row', rows: [row] });
      return;
    }
    for (const line of lines) {
      const pending = this.mapLine(cells, row, line);
      if (pending !== undefined) await pending;
    }
  }

  /** The row as expressions that read the whole row see it (made once, on first need). */
  private rowInput(cells: string[]): () => RowInput {
    let input: RowInput | undefined;
    return () => {
      if (input === undefined) {
        input = {};
        for (const i of this.inputIndexes) input[this.names[i]] ??= trim(cells[i]);
        for (const c of this.absentOptional) input[c] = '';
      }
      return input;
    };
  }

  private mapLine(cells: string[], row: number, line: unknown): Promise<void> | undefined {
    const rowInput = this.rowInput(cells);
    const exprs = this.exprs;
    // Reused while rows stay synchronous; a row that waits gets its own.
    const results = this.results;
    let pending = false;
    for (let e = 0; e < exprs.length; e++) {
      try {
        const v = exprs[e].evaluate(cells, rowInput, line);
        if (v instanceof Promise) {
          pending = true;
          results[e] = v.then(undefined, failed);
        } else results[e] = v;
      } catch (err) {
        results[e] = failed(err);
      }
    }
    if (!pending) {
      this.emit(cells, row, results as Outcome[]);
      return undefined;
    }
    this.results = new Array<Outcome | Promise<Outcome>>(exprs.length);
    return Promise.all(results).then((done) => this.emit(cells, row, done));
  }

  /** The row's fate from its expressions' outcomes: skipped, or a template row for the builder. */
  private emit(cells: string[], row: number, results: Outcome[]): void {
    const fields = this.fields;
    const value = (f: number, field: Field, orderNumber: string | undefined): string | undefined => {
      const v = results[f];
      if (!(v instanceof Failure)) return text(v);
      this.problem(row, orderNumber, field.target, v.message, field, this.rowOf(f, row));
      // The cell as written goes on, so the row still becomes a line the problem can be placed on.
      const first = field.expr.columns[0];
      return first === undefined ? undefined : trim(cells[this.names.indexOf(first)]);
    };
    const out = new Array<string>(fields.length);
    let orderNumber: string | undefined;
    if (this.orderSlot >= 0) {
      orderNumber = value(this.orderSlot, fields[this.orderSlot], undefined);
      out[this.orderSlot] = orderNumber ?? '';
    }
    const skippedOrder = orderNumber === undefined ? undefined : this.skippedOrders.get(orderNumber);
    if (skippedOrder !== undefined) {
      skippedOrder.rows.push(row);
      return;
    }
    for (let r = 0; r < this.rules.length; r++) {
      const rule = this.rules[r];
      const hit = results[fields.length + r];
      if (hit instanceof Failure) {
        this.problem(row, orderNumber, 'skip', hit.message, rule);
        continue;
      }
      if (!truthy(hit)) continue;
      if (rule.scope === 'order' && orderNumber !== undefined) {
        const started = this.startedOrders.get(orderNumber);
        if (started !== undefined) {
          const message =
            `order ${orderNumber} is to be skipped (${rule.reason}) but its row ${started} was read as an order ` +
            "line: a skip rule for whole orders must hold on the order's first row (fillDown helps)";
          this.problem(row, orderNumber, 'skip', message, rule);
          return;
        }
        const group: SkippedRows = { reason: rule.reason, scope: 'order', orderNumber, rows: [row] };
        this.skippedOrders.set(orderNumber, group);
        this.skipped.push(group);
        return;
      }
      this.skipped.push({ reason: rule.reason, scope: 'row', ...(orderNumber ? { orderNumber } : {}), rows: [row] });
      return;
    }
    for (let f = 0; f < fields.length; f++) {
      if (f !== this.orderSlot) out[f] = value(f, fields[f], orderNumber) ?? '';
    }
    if (this.sizeField !== undefined) {
      const size = value(fields.length + this.rules.length, this.sizeField, orderNumber);
      // A quantity its expression could not read stays the line's quantity: its problems are named
      // by the quantity's column, not the size's.
      const read = this.quantitySlot >= 0 && !(results[this.quantitySlot] instanceof Failure);
      if (size !== undefined && read && out[this.quantitySlot] !== '') {
        out[this.sizesSlot] = `${size}=${out[this.quantitySlot]}`;
        out[this.quantitySlot] = '';
      }
    }
    if (orderNumber !== undefined && !this.startedOrders.has(orderNumber)) this.startedOrders.set(orderNumber, row);
    this.sink.record(out, row, this.cellRows(row));
  }

  /**
   * The end of the read, once the builder made its document: the export's own header for
   * result.csv, the mapping's findings and its rows' placed problems added to `diagnostics`, the
   * same item's lines merged. Returns the rows the skip rules left out.
   */
  complete(parts: { doc?: MappedDocument; csv: CsvOrigin }, diagnostics: Diagnostic[]): SkippedRows[] {
    parts.csv.header = this.exportHeader;
    // The export has rows even when the mapping skipped them all (every order cancelled): that is
    // what the skipped rows say, not "no rows".
    if (this.rowsRead > 0) {
      const kept = diagnostics.filter((d) => d.code !== 'csv.no-rows');
      diagnostics.splice(0, diagnostics.length, ...kept);
    }
    for (const d of this.diagnostics) diagnostics.push(d);
    if (this.unfit && this.rowsRead > 0) {
      diagnostics.push({
        severity: 'error',
        code: 'mapping.rows-unread',
        message:
          `none of the file's ${this.rowsRead} rows was read: the mapping needs columns its header does not have ` +
          '(each named above), so no row is an order, and none is skipped',
        source: { file: this.file },
      });
    }
    for (const d of placeProblems(parts.doc, parts.csv.itemRows, this.problems)) diagnostics.push(d);
    if (parts.doc !== undefined && this.mapping.mergeLines !== false) {
      const merged = mergeLines(parts.doc, parts.csv.itemRows, diagnostics, this.sizeField !== undefined);
      if (merged.length > 0) parts.csv.mergedRows = merged;
    }
    return this.skipped;
  }

  private problem(
    row: number,
    orderNumber: string | undefined,
    target: string,
    message: string,
    { expr, at }: { expr: CompiledExpression; at?: SourceLocation },
    /** The row the value is written on, when filled down from another. */
    writtenOn = row,
  ): void {
    const column = expr.column ?? expr.columns[0];
    const where = whereWritten(at);
    if (this.fillIndexes.length > 0) {
      const key = `${writtenOn}\0${target}`;
      if (writtenOn !== row && this.filledProblems.has(key)) return;
      this.filledProblems.add(key);
    }
    this.problems.push({
      row,
      ...(orderNumber ? { orderNumber } : {}),
      target,
      message: `${message}${where}`,
      source: { file: this.file, row: writtenOn, ...(column !== undefined ? { columnName: column } : {}) },
    });
  }
}

const trim = (cell: string | undefined): string => (cell ?? '').trim();

/**
 * The checker of the columns a mapping names against the header: each one the header lacks (and
 * the mapping does not take as optional) is an error, located where the mapping names it; a
 * shipped preset's own lines are not the user's to edit, so its columns are reported once each,
 * at the header. Every column checked is added to `used`.
 */
function unknownColumns(
  ctx: {
    file: string;
    mappingFile?: string;
    row: number;
    indexOf: ReadonlyMap<string, number>;
    optional: ReadonlySet<string>;
    used: Set<string>;
  },
  out: Diagnostic[],
): (columns: readonly string[], at: SourceLocation | undefined, what: string) => void {
  const { file, row, indexOf, optional, used } = ctx;
  // Suggestions come from the header's plausible names: a line of another delimiter read as one
  // cell holds every name, and would be suggested, whole, for each of them.
  const suggestible = [...indexOf.keys()].filter((n) => n.length <= MAX_SUGGESTED && !/[;\t|]/.test(n));
  const reported = new Set<string>();
  return (columns, at, what) => {
    for (const c of columns) {
      used.add(c);
      if (indexOf.has(c) || optional.has(c)) continue;
      const hint = didYouMeanName(c, suggestible, COLUMN_NAME_MATCHING);
      const preset = at === undefined ? undefined : presetOf(at.file);
      if (preset === undefined) {
        const message = `${what} names column "${c}", which is not in the header of ${file} (line ${row})${hint}`;
        out.push({
          severity: 'error',
          code: 'mapping.unknown-column',
          message,
          source: at ?? { file: ctx.mappingFile ?? file },
        });
      } else if (!reported.has(c)) {
        reported.add(c);
        const message = `the ${preset} preset reads column "${c}", which is not in the header${hint}`;
        out.push({ severity: 'error', code: 'mapping.unknown-column', message, source: { file, row } });
      }
    }
  };
}

/** Longest header name suggested for a column a mapping names. */
const MAX_SUGGESTED = 100;

/** The shipped preset a location is in (presets/NAME.yaml), if it is in one. */
function presetOf(file: string): string | undefined {
  return dirname(resolve(file)) === resolve(PRESETS_DIR) ? basename(file, '.yaml') : undefined;
}

/** ` (mapping.yaml:3:11)` after a row's message: where the expression is; a preset by its name, not its path. */
function whereWritten(at: SourceLocation | undefined): string {
  return at === undefined ? '' : ` (${writtenAt(at)})`;
}

/** `mapping.yaml:3:11`, or `the shopify preset` for a preset's own line. */
function writtenAt(at: SourceLocation): string {
  const preset = presetOf(at.file);
  return preset !== undefined ? `the ${preset} preset` : `${at.file}:${at.line ?? 1}:${at.column ?? 1}`;
}

/** Each cell guarded against spreadsheet formulas (`'+1 713…`) without its mark, in place. */
function unguard(cells: string[], { mark, before }: { mark: string; before: string }): void {
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (cell.length > 1 && cell[0] === mark && before.includes(cell[1])) cells[i] = cell.slice(1);
  }
}

const truthy = (v: ExpressionValue): boolean => v !== undefined && v !== false && v !== '' && v !== 0;

/** An expression's value as template cell text; blank → undefined. */
function text(v: ExpressionValue): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string') {
    const t = v.trim();
    return t === '' ? undefined : t;
  }
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  // An object is a set of sizes: { S: 10, M: 20 } → S=10;M=20.
  const parts = Object.entries(v)
    .filter(([, q]) => q !== undefined && q !== null && q !== '')
    .map(([s, q]) => `${s}=${String(q)}`);
  return parts.length === 0 ? undefined : parts.join(';');
}
