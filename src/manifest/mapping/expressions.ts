/**
 * The mapping's expression language: JSONata (docs/mappings.md#expressions), compiled once when
 * the mapping loads and evaluated per row with the row's cells (column name → trimmed text) as
 * input, plus htorder's helpers ($decimal, $date, $lookup, …).
 *
 * JSONata's `evaluate` is asynchronous and costs a few microseconds; a 100,000-row export must
 * check in about the time of the default template. So: a bare column name never reaches JSONata
 * (it is the plain rename), and every other expression's result is cached by the cells it reads
 * (found in its syntax tree): the order number of an order's 2nd..nth rows, a SKU seen before,
 * a status, cost one map look-up.
 */
import { BoundedMemo } from '../../core/bounded-memo.js';
import jsonata from 'jsonata';
import { countryCodeOf } from '../../core/countries.js';
import { excelSerialText } from '../../core/excel-date.js';
import { isNumberText, MAX_NUMBER_TEXT } from '../../core/number-text.js';
import { localisedBoolean } from '../csv/cells.js';
import type { LookupTable } from './model.js';

/** The row an expression sees: column name → cell text (blank cells are ""). */
export type RowInput = Record<string, string>;

export type ExpressionValue = string | number | boolean | Record<string, unknown> | undefined;

export interface CompiledExpression {
  source: string;
  /** The columns the expression reads by name (for the header check and the cache key). */
  columns: string[];
  /** The plain rename: the one column it is. */
  column?: string;
  /** The column its value comes from, where that is not its first column (messages name it). */
  label?: string;
  /** Its value depends on `columns` (and `$line`) alone (no `$`, wildcard or `$now()`): it needs only those cells. */
  cacheable: boolean;
  /**
   * Evaluates on a row: the cells by index (`indexes` from `bind`), the full row when needed, and
   * the line of a mapping's `lines` as `$line`.
   */
  evaluate(cells: readonly string[], row: () => RowInput, line?: unknown): ExpressionValue | Promise<ExpressionValue>;
  /** Fixes the column indexes once the header is known. */
  bind(indexOf: ReadonlyMap<string, number>): void;
}

/** A mistake in an expression, found when compiling (position: offset in the expression). */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(message);
  }
}

/** Cache entries per expression before the cache starts over (bounded memory on unique values). */
const CACHE_LIMIT = 50_000;

/**
 * What one evaluation may spend, whatever the row: a mapping's expression takes microseconds, and
 * a recursion that never ends, a range of ten million numbers or a split of a megabyte cell stops
 * with an error on its order instead of holding the event loop or the heap.
 */
const EXPRESSION_BUDGET = { timeout: 1_000, stack: 500, sequence: 100_000 } as const;

/**
 * JSONata functions a mapping may not call: `$eval` would evaluate text as an expression, and
 * the text is a cell's, written by whoever made the export.
 */
const REFUSED_FUNCTIONS = new Set(['eval']);

/** What an expression is, found once from its syntax tree. */
export interface ExpressionAnalysis {
  /** The columns it reads by name (for the header check and the cache key). */
  columns: string[];
  /** Its value depends on `columns` (and `$line`) alone. */
  cacheable: boolean;
  usesLine: boolean;
  /** A bare column name: the plain rename of that column. */
  rename?: string;
  /**
   * A condition's first column read in its branches: `Country = "US" ? $pad(Zip, 5) : Zip` gives
   * the Zip's value, and a message about the value names Zip, not the Country it tests.
   */
  label?: string;
}

/**
 * Analyses by source text, each parsed once per process: recognising an export reads every
 * preset's expressions, which repeat across presets and variants (and once more for the preset
 * that fits), which is what recognition costs over `--mapping` in `npm run bench:recognise`.
 * An analysis is a pure function of the source. Bounded: a process reading many mappings starts
 * the table over.
 */
const analyses = new BoundedMemo<string, ExpressionAnalysis | ExpressionError>(10_000);

/** The columns an expression reads and its shape; a syntax error or a refused function throws ExpressionError. */
export function analyseExpression(source: string): ExpressionAnalysis {
  const found = analyses.answer(source, () => analyse(source));
  if (found instanceof ExpressionError) throw found;
  return found;
}

function parse(source: string): jsonata.Expression {
  try {
    return jsonata(source, { ...EXPRESSION_BUDGET });
  } catch (err) {
    const e = err as { message?: string; position?: number };
    throw new ExpressionError(e.message ?? String(err), e.position);
  }
}

function analyse(source: string): ExpressionAnalysis | ExpressionError {
  let ast: Node;
  try {
    ast = parse(source).ast() as Node;
  } catch (err) {
    if (err instanceof ExpressionError) return err;
    throw err;
  }
  const found: Found = { columns: new Set<string>(), cacheable: true };
  walk(ast, found);
  if (found.refused !== undefined)
    return new ExpressionError(
      `$${found.refused.name} is not available in a mapping: it would evaluate a cell's text as an expression`,
      found.refused.position,
    );
  const single =
    (ast.type as string) === 'path' && ast.steps?.length === 1 && ast.steps[0].type === 'name' && !hasExtras(ast);
  const label = (ast.type as string) === 'condition' ? branchColumn(ast) : undefined;
  return {
    columns: [...found.columns],
    cacheable: found.cacheable,
    usesLine: found.usesLine === true,
    ...(single ? { rename: String(ast.steps?.[0].value) } : {}),
    ...(label !== undefined ? { label } : {}),
  };
}

/**
 * `sequence`: the expression's whole result is kept, an array as an array (a mapping's `lines`);
 * otherwise an array of one value is that value.
 */
export function compileExpression(
  source: string,
  tables: Readonly<Record<string, LookupTable>>,
  sequence = false,
  numbers: NumberStyle = { decimalComma: false },
): CompiledExpression {
  const { columns, cacheable, usesLine, rename, label } = analyseExpression(source);
  if (rename !== undefined && !sequence) return renameOf(source, [...columns], rename);
  // An evaluation of its own: the helpers it is given are this file's (its number style, its lookups).
  const expr = parse(source);
  registerHelpers(expr, tables, numbers);
  const compiled = new EvaluatedExpression(source, [...columns], cacheable, expr, usesLine, sequence);
  if (label !== undefined) compiled.label = label;
  return compiled;
}

/** The plain rename: the cell of one column, never evaluated by JSONata. */
function renameOf(source: string, columns: string[], column: string): CompiledExpression {
  let index = -1;
  return {
    source,
    columns,
    column,
    cacheable: true,
    bind(indexOf) {
      index = indexOf.get(column) ?? -1;
    },
    evaluate(cells) {
      return index < 0 ? undefined : cells[index];
    },
  };
}

/** An expression JSONata evaluates; when cacheable, its value is cached by the cells it reads. */
class EvaluatedExpression implements CompiledExpression {
  label?: string;
  private indexes: number[] = [];
  private readonly cache = new BoundedMemo<string, ExpressionValue>(CACHE_LIMIT);
  // The cells of the last row evaluated, and its value: an order's rows repeat them (fill-down),
  // and comparing a few strings is cheaper than building a cache key.
  private last: string[] = [];
  private lastValue: ExpressionValue;
  private hasLast = false;

  constructor(
    readonly source: string,
    readonly columns: string[],
    readonly cacheable: boolean,
    private readonly expr: jsonata.Expression,
    private readonly usesLine: boolean,
    private readonly sequence: boolean,
  ) {}

  bind(indexOf: ReadonlyMap<string, number>): void {
    this.indexes = this.columns.map((c) => indexOf.get(c) ?? -1);
    this.last = new Array<string>(this.indexes.length).fill('');
    this.hasLast = false;
  }

  evaluate(cells: readonly string[], row: () => RowInput, line?: unknown): ExpressionValue | Promise<ExpressionValue> {
    const indexes = this.indexes;
    let key: string | undefined;
    let input: RowInput;
    if (this.cacheable) {
      if (!this.usesLine && this.hasLast && this.sameAsLast(cells)) return this.lastValue;
      key = cells[indexes[0]] ?? '';
      for (let k = 1; k < indexes.length; k++) key += `\u0000${cells[indexes[k]] ?? ''}`;
      if (this.usesLine) key += `\u0001${JSON.stringify(line) ?? ''}`;
      const hit = this.cache.get(key);
      if (hit !== undefined || this.cache.has(key)) {
        this.remember(cells, hit);
        return hit;
      }
      // A cacheable expression reads only its own columns: give it just those.
      input = {};
      for (let k = 0; k < indexes.length; k++) input[this.columns[k]] = (cells[indexes[k]] ?? '').trim();
    } else input = row();
    const bindings = this.usesLine ? { line } : undefined;
    return this.expr.evaluate(input, bindings).then(
      (value: unknown) => {
        const v = this.sequence ? (value as ExpressionValue) : plain(value);
        if (key !== undefined) {
          this.cache.set(key, v);
          this.remember(cells, v);
        }
        return v;
      },
      (err: { message?: string }) => {
        throw new Error(err.message ?? String(err));
      },
    );
  }

  private sameAsLast(cells: readonly string[]): boolean {
    for (let k = 0; k < this.indexes.length; k++) if ((cells[this.indexes[k]] ?? '') !== this.last[k]) return false;
    return true;
  }

  private remember(cells: readonly string[], v: ExpressionValue): void {
    for (let k = 0; k < this.indexes.length; k++) this.last[k] = cells[this.indexes[k]] ?? '';
    this.lastValue = v;
    this.hasLast = true;
  }
}

/** JSONata sequences and arrays of one value become that value; everything else as is. */
function plain(value: unknown): ExpressionValue {
  if (Array.isArray(value)) return value.length === 0 ? undefined : plain(value[0]);
  if (value === null) return undefined;
  if (typeof value === 'function') return undefined;
  return value as ExpressionValue;
}

interface Found {
  columns: Set<string>;
  cacheable: boolean;
  /** It reads `$line` (a line of a mapping's `lines`). */
  usesLine?: boolean;
  /** The first reference to a REFUSED_FUNCTIONS name, called or not. */
  refused?: { name: string; position?: number };
}

type Node = jsonata.ExprNode & Record<string, unknown>;

function hasExtras(node: jsonata.ExprNode): boolean {
  const step = node.steps?.[0] as (jsonata.ExprNode & Record<string, unknown>) | undefined;
  return step !== undefined && (step.stages !== undefined || step.predicate !== undefined || step.group !== undefined);
}

/** The first column a condition's branches read (`then`, then `else`). */
function branchColumn(ast: Node): string | undefined {
  const found: Found = { columns: new Set<string>(), cacheable: true };
  walk(ast.then, found);
  walk(ast.else, found);
  return found.columns.values().next().value;
}

/** Collects the columns read by name (a path's first step) and whether the result depends on them alone. */
function walk(node: unknown, found: Found): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) walk(n, found);
    return;
  }
  const n = node as Node;
  if ((n.type as string) === 'path' && Array.isArray(n.steps) && n.steps.length > 0) {
    const first = n.steps[0] as Node;
    if (first.type === 'name') found.columns.add(String(first.value));
  }
  if (
    (n.type === 'variable' && (n.value === '' || n.value === '$')) ||
    n.type === 'wildcard' ||
    n.type === 'descendant'
  )
    found.cacheable = false;
  if (n.type === 'function' && (n.procedure as Node | undefined)?.value === 'now') found.cacheable = false;
  if (n.type === 'variable' && n.value === 'line') found.usesLine = true;
  if (n.type === 'variable' && REFUSED_FUNCTIONS.has(String(n.value)))
    found.refused ??= { name: String(n.value), position: typeof n.position === 'number' ? n.position : undefined };
  for (const key of Object.keys(n)) {
    if (key === 'position' || key === 'value' || key === 'type') continue;
    walk(n[key], found);
  }
}

/** A thrown helper error reads like the other messages: the value and what was expected. */
function fail(message: string): never {
  throw { message };
}

/**
 * What the numbers of one file look like, set once its header is read: a `;`-separated file was
 * saved by a spreadsheet whose decimal mark is `,` (that is why its list separator is `;`).
 */
export interface NumberStyle {
  decimalComma: boolean;
  /**
   * A workbook's: a number cell reads as a plain number (`2.5`, `1234.5`), so text of that shape
   * is that number, whatever decimal mark an expression declares for the CSV export.
   */
  plainNumbers?: boolean;
}

/** How a workbook's number cell reads: digits, a point and digits. */
const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

/**
 * A number from cell text. `separator` `","`: `24,00` → 24, `1.234,50` → 1234.5; `"."`: commas
 * group thousands. Not given, the text's shape says: the last of `.` and `,` is the decimal mark
 * when both are there (`1,234.50`, `1.234,50`); a lone one followed by other than three digits
 * is one (`12,50`, `24.0`); marks repeated group thousands (`1,234,567`); a lone mark before
 * exactly three digits (`1,000`) groups thousands unless the file writes decimal commas
 * (`decimalComma`: `1,000` → 1, `1.000` → 1000). Currency signs and blanks are read past.
 * Blank → undefined.
 */
export function decimal(
  text: unknown,
  separator?: unknown,
  decimalComma = false,
  plainNumbers = false,
): number | undefined {
  if (text === undefined || text === null) return undefined;
  if (typeof text === 'number') return text;
  const raw = String(text);
  // Cell text is hostile: nothing longer than a number could be is scanned, or quoted back.
  if (raw.length > MAX_NUMBER_TEXT) fail(`a text of ${raw.length} characters is not a number`);
  let s = raw.replace(/[\s\u00a0€$£¥]/g, '').replace(/^[A-Z]{3}/, '');
  if (s === '') return undefined;
  if (plainNumbers && PLAIN_NUMBER.test(s)) return Number(s);
  if (separator === ',' || separator === '.') {
    const read = declared(s, separator);
    if (read === undefined) fail(`"${raw}" is not a number with "${separator}" as its decimal mark`);
    s = read;
  } else s = byShape(s, decimalComma);
  if (!isNumberText(s)) fail(`"${raw}" is not a number`);
  return Number(s);
}

/**
 * `s` with `mark` as its decimal mark → with `.`, its grouping marks (the other of `.` and `,`)
 * left out; undefined when they do not group thousands: `2.5` with a decimal comma is no number
 * (never 25), nor `1,5` with a decimal point.
 */
function declared(s: string, mark: string): string | undefined {
  const group = mark === ',' ? '.' : ',';
  const at = s.indexOf(mark);
  const whole = at < 0 ? s : s.slice(0, at);
  if (whole.includes(group) && !grouped(whole, group)) return undefined;
  return at < 0 ? ungrouped(whole, group) : `${ungrouped(whole, group)}.${s.slice(at + 1)}`;
}

/** `s` with its decimal mark as `.` and no grouping marks, by the rules of `decimal`; as it was when it fits none. */
function byShape(s: string, decimalComma: boolean): string {
  const comma = s.lastIndexOf(',');
  const dot = s.lastIndexOf('.');
  if (comma >= 0 && dot >= 0) {
    const group = comma > dot ? '.' : ',';
    const at = Math.max(comma, dot);
    const whole = s.slice(0, at);
    return grouped(whole, group) ? `${ungrouped(whole, group)}.${s.slice(at + 1)}` : s;
  }
  const at = comma >= 0 ? comma : dot;
  if (at < 0) return s;
  const mark = s[at];
  // Repeated, a mark groups thousands (`1,234,567`); `1.2.3` is no number.
  if (s.indexOf(mark) !== at) return grouped(s, mark) ? ungrouped(s, mark) : s;
  const thousands = mark === ',' ? !decimalComma : decimalComma;
  if (thousands && s.length - at - 1 === 3 && grouped(s, mark)) return ungrouped(s, mark);
  return mark === ',' ? `${s.slice(0, at)}.${s.slice(at + 1)}` : s;
}

/** Digits grouped by threes with `mark` (`1,234,567`, `-12.345`): a first group of one to three digits, then threes. */
function grouped(s: string, mark: string): boolean {
  const groups = s.replace(/^[+-]/, '').split(mark);
  return (
    groups.length > 1 &&
    /^\d{1,3}$/.test(groups[0]) &&
    groups.slice(1).every((g) => g.length === 3 && /^\d{3}$/.test(g))
  );
}

const ungrouped = (s: string, mark: string): string => s.split(mark).join('');

/** A whole number from `24`, `24.0` or `24,00`; anything with a fraction is an error. */
function integer(text: unknown, separator?: unknown, decimalComma = false, plainNumbers = false): number | undefined {
  const n = decimal(text, separator, decimalComma, plainNumbers);
  if (n === undefined) return undefined;
  if (!Number.isInteger(n)) fail(`"${String(text)}" is not a whole number`);
  return n;
}

/**
 * Yes or no from cell text, in the words spreadsheets write in their languages (Excel writes
 * TRUE as WAHR, VRAI, VERDADERO…): true/false, yes/no, 1/0 and theirs. Blank → undefined;
 * anything else is an error, never taken for no.
 */
export function bool(text: unknown): boolean | undefined {
  if (text === undefined || text === null) return undefined;
  if (typeof text === 'boolean') return text;
  const raw = String(text).trim();
  if (raw === '') return undefined;
  const b = localisedBoolean(raw);
  if (b === undefined)
    fail(`"${raw.slice(0, MAX_NUMBER_TEXT)}" is not yes or no (true/false, WAHR/FALSCH, VRAI/FAUX…)`);
  return b;
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** An Excel serial day number (1900 date system) → YYYY-MM-DD, its time of day dropped. */
export function excelDate(serial: unknown): string | undefined {
  if (serial === undefined || serial === null || serial === '') return undefined;
  const n = typeof serial === 'number' ? serial : Number(String(serial).trim());
  // Up to 9999-12-31, the last day Excel has.
  if (!Number.isFinite(n) || n < 1 || n > 2_958_465) fail(`"${String(serial)}" is not an Excel date number`);
  return excelSerialText(Math.floor(n));
}

/**
 * A date in a declared format → YYYY-MM-DD: `dd.mm.yyyy`, `mm/dd/yyyy`, `yyyy-mm-dd`, any
 * order of dd, mm and yyyy with one separator, and in each of them the ISO date a workbook's
 * date cell reads as; `iso`: an ISO date or datetime (its date part in UTC when it has a zone).
 * Never guessed: text not in the format is an error.
 */
export function date(text: unknown, format?: unknown): string | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  const s = String(text).trim();
  const f = format === undefined ? 'iso' : String(format).toLowerCase();
  if (f === 'iso') {
    const m =
      /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?)?$/i.exec(s);
    if (m === null) fail(`"${s}" is not an ISO date (YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)`);
    if (m[7] !== undefined && m[4] !== undefined) {
      const zone = /^(Z|UTC)$/i.test(m[7]) ? 'Z' : m[7].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
      const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${zone}`);
      return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
    }
    return checked(Number(m[1]), Number(m[2]), Number(m[3]), s);
  }
  const parts = /^(dd|mm|yyyy)([./\- ])(dd|mm|yyyy)\2(dd|mm|yyyy)$/.exec(f);
  if (parts === null) fail(`date format "${String(format)}" is not dd, mm and yyyy with one separator, or iso`);
  // A workbook's date cell reads as an ISO date (`2026-12-04`, `2026-12-04T09:30:00`) whatever
  // the sheet shows, so one mapping reads the CSV export's `04.12.2026` and the workbook's cell.
  // Four digits and a dash first are no day or month of any other format: no guess, save in
  // yyyy-dd-mm, which reads the same text otherwise.
  const workbook = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2})?)?$/.exec(s);
  if (workbook !== null && f !== 'yyyy-dd-mm') {
    return checked(Number(workbook[1]), Number(workbook[2]), Number(workbook[3]), s);
  }
  const sep = parts[2];
  // The time part of a datetime cell is read past: `04.12.2026 00:00`.
  const values = s.split(/\s+/)[0].split(sep);
  if (values.length !== 3 || !values.every((v) => /^\d{1,4}$/.test(v))) fail(`"${s}" is not a date in the format ${f}`);
  const at = (name: string): number => Number(values[[parts[1], parts[3], parts[4]].indexOf(name)]);
  return checked(at('yyyy'), at('mm'), at('dd'), s, f);
}

function checked(y: number, m: number, d: number, text: string, format = 'YYYY-MM-DD'): string {
  const dt = new Date(Date.UTC(y, m - 1, d));
  if (y < 1000 || dt.getUTCMonth() !== m - 1 || dt.getUTCDate() !== d)
    fail(`"${text}" is not a date in the format ${format}`);
  return `${y}-${pad2(m)}-${pad2(d)}`;
}

/** Left-pads digits: `$pad("2134", 5)` → `02134`; longer text is left as it is. */
function pad(text: unknown, width: unknown, fill?: unknown): string | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  return String(text).padStart(Number(width), fill === undefined ? '0' : String(fill));
}

/**
 * A country as the shop wrote it → its ISO 3166-1 alpha-2 code (`USA`, `United States`,
 * `Deutschland`, `England` → US, US, DE, GB); text that names no country is kept as written, for
 * the resolve layer to report with its suggestions.
 */
function countryCode(text: unknown): string | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  const written = String(text);
  return countryCodeOf(written) ?? written;
}

/** The size code at the end of a SKU or line name (`A10001-M`, `Team Tee - XL`, `… (M)`). */
export const SIZE_AT_END = /(?:^|[\s\-_/(])(XXS|XS|S|M|L|XL|XXL|2XL|XXXL|3XL|4XL|5XL|OS)\)?$/i;

function sizeOf(text: unknown): string | undefined {
  if (text === undefined || text === null) return undefined;
  const m = SIZE_AT_END.exec(String(text).trim());
  return m === null ? undefined : m[1].toUpperCase();
}

/** Pairs a packed cell holds, at most this many: a cell is hostile and may be megabytes. */
const MAX_PAIRS = 1_000;

/**
 * `name:Tee|sku:GD5000-M|quantity:2` → { name: "Tee", sku: "GD5000-M", quantity: "2" }: the
 * items separator (default `|`), then the first name separator (default `:`) of each part.
 * Names and values are trimmed; a part without a separator is left out; the first of a name wins.
 */
export function pairs(
  text: unknown,
  itemSeparator?: unknown,
  nameSeparator?: unknown,
): Record<string, string> | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  const items = String(text).split(itemSeparator === undefined ? '|' : String(itemSeparator), MAX_PAIRS);
  const sep = nameSeparator === undefined ? ':' : String(nameSeparator);
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf(sep);
    if (at <= 0) continue;
    const name = item.slice(0, at).trim();
    if (name !== '' && !Object.hasOwn(out, name)) out[name] = item.slice(at + sep.length).trim();
  }
  return out;
}

/**
 * The non-blank cells of the columns named `prefix` + a number (`line_item_1`, `line_item_2` …)
 * of the row `$`, in the order of their numbers.
 */
function numbered(row: unknown, prefix: string): string[] {
  if (row === null || typeof row !== 'object') return [];
  const found: Array<[number, string]> = [];
  for (const [name, cell] of Object.entries(row as Record<string, unknown>)) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    if (!/^\d{1,6}$/.test(rest) || typeof cell !== 'string' || cell.trim() === '') continue;
    found.push([Number(rest), cell]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, cell]) => cell);
}

function registerHelpers(
  expr: jsonata.Expression,
  tables: Readonly<Record<string, LookupTable>>,
  numbers: NumberStyle,
): void {
  // Refused when the mapping loads (walk); bound here too, so no alias reaches JSONata's own.
  for (const name of REFUSED_FUNCTIONS)
    expr.registerFunction(name, () => fail(`$${name} is not available in a mapping`));
  expr.registerFunction(
    'decimal',
    (t: unknown, sep?: unknown) => decimal(t, sep, numbers.decimalComma, numbers.plainNumbers),
    '<x?s?:n>',
  );
  expr.registerFunction(
    'integer',
    (t: unknown, sep?: unknown) => integer(t, sep, numbers.decimalComma, numbers.plainNumbers),
    '<x?s?:n>',
  );
  expr.registerFunction('bool', bool, '<x?:b>');
  expr.registerFunction('date', date, '<x?s?:s>');
  expr.registerFunction('excelDate', excelDate, '<x?:s>');
  expr.registerFunction('pad', pad, '<x?ns?:s>');
  expr.registerFunction('sizeOf', sizeOf, '<x?:s>');
  expr.registerFunction('countryCode', countryCode, '<x?:s>');
  expr.registerFunction('pairs', pairs, '<x?s?s?:o>');
  expr.registerFunction('numbered', numbered, '<x?s:a>');
  expr.registerFunction(
    'lookup',
    (name: string, key: unknown, column?: string) => {
      const table = tables[name];
      if (table === undefined)
        fail(`no lookup table "${name}" (the mapping's lookups name ${Object.keys(tables).join(', ') || 'none'})`);
      if (key === undefined || key === null || key === '') return undefined;
      const row = table.rows.get(String(key).trim());
      if (row === undefined) return undefined;
      if (column === undefined) return row;
      const v = row[column];
      return v === '' ? undefined : v;
    },
    '<sx?s?:x>',
  );
}
