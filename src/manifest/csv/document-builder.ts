/**
 * Builds the manifest-shaped document from CSV records, one record at a time: rows with the
 * same orderNumber form one job (in order of first appearance, adjacent or not), each row one
 * item. Pure and synchronous; the file I/O lives in read-csv.ts.
 *
 * Job-level columns must agree across a job's rows; a blank cell on a later row means "the
 * same". The first row that sets a field wins and is remembered (compactly, in an Int32Array)
 * both for conflict messages and for source locations.
 *
 * Memory matters here (a million rows must fit with room to spare: peak RSS in `npm run
 * bench:check`), hence: strings that repeat are interned, objects are built as compact literals
 * in the shapes the header fixes (document-layout.ts), and nothing per cell is kept beyond the
 * value itself; where values came from is kept in Int32Arrays (row-tables.ts).
 */
import type { Diagnostic, ManifestFormat, RawDocument, SourceLocation } from '../model.js';
import { type CsvSourceTables, csvSourceMap } from './csv-source-map.js';
import { isExpressionMapping, type Mapping } from '../mapping/model.js';
import type { MappedRows } from '../mapping/mapped-rows.js';
import type { CsvScanHandlers } from './csv-scanner.js';
import { StringInterner, ownCopy, parseSizes, toBoolean, toInteger, trimCell } from './cells.js';
import { Kind, isJobLevel, planColumns, type Binding, type ColumnPlan } from './column-plan.js';
import { DocumentLayout } from './document-layout.js';
import { ItemDraft } from './item-draft.js';
import { FieldRows, ItemsInFileOrder } from './row-tables.js';
import { csvOriginOf } from './item-rows.js';

type Value = string | number | boolean;
type Obj = Record<string, unknown>;

export interface CsvDocumentParts extends CsvSourceTables {
  doc?: { version: 1; jobs: Obj[] };
  diagnostics: Diagnostic[];
}

/** What the header fixes: which column fills what, and the shapes of the objects made. */
interface FromHeader {
  plan: ColumnPlan;
  layout: DocumentLayout;
  draft: ItemDraft;
}

/** Shared placeholder until a job's items are distributed (never mutated). */
const NO_ITEMS: Obj[] = [];

export class CsvDocumentBuilder implements CsvScanHandlers {
  private fromHeader: FromHeader | undefined;
  private headerCells: string[] = [];
  private headerRow = 0;
  private readonly jobs: Obj[] = [];
  private readonly jobIndex = new Map<string, number>();
  /** The last row's job, by its orderNumber: an order's rows are usually adjacent, so most rows need no lookup. */
  private lastOrderNumber: string | undefined;
  private lastJob = 0;
  private fieldRows = new FieldRows(1);
  private readonly items = new ItemsInFileOrder();
  private readonly interner = new StringInterner();
  private readonly diagnostics: CappedDiagnostics;

  constructor(
    private readonly file: string,
    private readonly skipRows: number,
    private readonly mapping?: Mapping,
    /** Diagnostics kept per code before the rest are summed up; a reader of part of a file caps them itself. */
    maxPerCode = MAX_DIAGNOSTICS_PER_CODE,
  ) {
    this.diagnostics = new CappedDiagnostics(file, maxPerCode);
  }

  header(cells: string[], row: number): void {
    this.headerCells = cells;
    this.headerRow = row;
    const plan = planColumns(cells, this.file, row, this.mapping);
    // An expression mapping's template columns are named by the export columns they come from.
    const labels = this.mapping?.columnLabels;
    if (labels !== undefined) {
      for (const b of [...plan.columns, ...(plan.orderNumber ? [plan.orderNumber] : [])]) b.column = labels[b.target];
      for (const target of plan.fieldColumns.keys()) {
        const label = labels[target];
        if (label === undefined) plan.fieldColumns.delete(target);
        else plan.fieldColumns.set(target, label);
      }
    }
    const layout = new DocumentLayout(plan);
    this.fromHeader = { plan, layout, draft: new ItemDraft(layout) };
    this.fieldRows = new FieldRows(plan.jobSlotCount);
    for (const d of plan.diagnostics) this.diagnostics.report(d);
    if (layout.problem !== undefined) this.diagnostics.report({ ...layout.problem, source: { file: this.file, row } });
  }

  record(cells: string[], row: number): void {
    this.recordFrom(cells, row, undefined);
  }

  /**
   * A row whose job-level cells may be written on other rows (an expression mapping's fillDown):
   * `cellRows[i]`, when set, is the row cell `i` comes from, where its findings point.
   */
  recordFrom(cells: string[], row: number, cellRows: readonly number[] | undefined): void {
    const from = this.fromHeader;
    const byOrderNumber = from?.plan.orderNumber;
    if (from === undefined || byOrderNumber === undefined) return; // reported at the header
    const { plan, layout, draft } = from;

    // Which job: by orderNumber; a row without one becomes a job of its own, so schema
    // validation reports the missing orderNumber at this row.
    const orderNumber = orderNumberOf(cells, byOrderNumber);
    let j: number | undefined;
    if (orderNumber === undefined) j = this.newJob(undefined, row, byOrderNumber, cells, from, cellRows);
    else if (orderNumber === this.lastOrderNumber) j = this.lastJob;
    else {
      // Kept (in the job, as a key of jobIndex and here): a string of its own, not a view of the chunk.
      const own = ownCopy(orderNumber);
      j = this.jobIndex.get(own) ?? this.newJob(own, row, byOrderNumber, cells, from, cellRows);
      this.lastOrderNumber = own;
      this.lastJob = j;
    }
    const job = this.jobs[j];
    const i = this.items.countOf(j);

    if (cells.length !== plan.width && !(cells.length > plan.width && blankFrom(cells, plan.width))) {
      const message = `row has ${cells.length} cells, the header has ${plan.width}`;
      this.error('csv.row-length', message, { file: this.file, row }, `jobs[${j}].items[${i}]`);
    }

    draft.reset();
    const bindings = plan.columns;
    for (let b = 0; b < bindings.length; b++) {
      const binding = bindings[b];
      const text = cellText(cells, binding);
      if (text === undefined) continue;
      if (isJobLevel(binding)) this.setJobField(job, binding, text, j, cellRows?.[binding.index] || row);
      else this.assignItem(draft, binding, layout.columnSlots[b], text, j, i, row);
    }
    // Item constants fill what this row left blank; job constants wait for all of the job's rows.
    const constants = plan.constants;
    for (let c = 0; c < constants.length; c++) {
      const binding = constants[c];
      const slot = layout.constantSlots[c];
      if (!isJobLevel(binding) && !draft.has(binding, slot)) {
        this.assignItem(draft, binding, slot, binding.constant as string, j, i, 0);
      }
    }
    this.items.add(draft.build(), j, row);
  }

  result(): CsvDocumentParts {
    const plan = this.fromHeader?.plan;
    let doc: CsvDocumentParts['doc'];
    if (plan === undefined) this.error('csv.no-rows', 'the file is empty: no header and no rows', { file: this.file });
    else if (plan.orderNumber !== undefined && this.jobs.length === 0) {
      this.error('csv.no-rows', 'the file has a header but no rows', { file: this.file, row: this.headerRow });
    } else if (plan.orderNumber !== undefined) {
      this.applyJobConstants(plan);
      doc = { version: 1, jobs: this.jobs };
    }
    return {
      ...(doc !== undefined ? { doc } : {}),
      csv: csvOriginOf(this.headerCells, this.skipRows, this.items.distribute(this.jobs)),
      headerRow: this.headerRow || this.skipRows + 1,
      slotRows: this.fieldRows,
      jobSlots: plan?.jobSlots ?? new Map<string, number>(),
      fieldColumns: plan?.fieldColumns ?? new Map<string, string>(),
      constantLocations: plan?.constantLocations ?? new Map<string, SourceLocation>(),
      diagnostics: this.diagnostics.finish(),
    };
  }

  private error(code: string, message: string, source: SourceLocation, field?: string): void {
    this.diagnostics.report({ severity: 'error', code, message, field, source });
  }

  /**
   * A job is built from its first row as compact literals (job and address; see
   * object-factory.ts): almost always every job-level value is on that row. A value first given
   * on a later row is added the ordinary way.
   */
  private newJob(
    orderNumber: string | undefined,
    row: number,
    binding: Binding,
    cells: string[],
    { plan, layout }: FromHeader,
    cellRows: readonly number[] | undefined,
  ): number {
    const j = this.jobs.length;
    this.fieldRows.addJob(j, row);
    this.items.addJob(j);
    const { job, address } = layout;
    let jobMask = 0;
    let addressMask = 0;
    if (orderNumber !== undefined) {
      job.values[0] = orderNumber;
      jobMask = 1;
      if (binding.index >= 0) this.fieldRows.set(j, binding.slot, row);
    }
    const columns = plan.columns;
    for (let b = 0; b < columns.length; b++) {
      const c = columns[b];
      if (!isJobLevel(c)) continue;
      const text = cellText(cells, c);
      if (text === undefined) continue;
      const bit = layout.columnSlots[b];
      if (c.kind === Kind.Address) {
        address.values[bit] = this.typed(c, text);
        addressMask |= 1 << bit;
      } else {
        job.values[bit] = this.typed(c, text);
        jobMask |= 1 << bit;
      }
      this.fieldRows.set(j, c.slot, cellRows?.[c.index] || row);
    }
    job.values[layout.deliveryAddressSlot] = address.build(addressMask);
    job.values[layout.itemsSlot] = NO_ITEMS; // set by ItemsInFileOrder.distribute()
    jobMask |= (1 << layout.deliveryAddressSlot) | (1 << layout.itemsSlot);
    this.jobs.push(job.build(jobMask));
    if (orderNumber !== undefined) this.jobIndex.set(orderNumber, j);
    return j;
  }

  /** Puts one cell's text into the row's item. `row` 0 = from a mapping constant. */
  private assignItem(
    draft: ItemDraft,
    binding: Binding,
    slot: number,
    text: string,
    j: number,
    i: number,
    row: number,
  ): void {
    switch (binding.kind) {
      case Kind.Item:
        draft.set(slot, this.typed(binding, text));
        return;
      case Kind.Attribute:
        // Slot -1: beyond the attributes a mask can hold, reported at the header.
        if (slot >= 0) draft.setAttribute(slot, this.interner.intern(text));
        return;
      case Kind.Size:
        this.addSize(draft, binding, binding.key, toInteger(text), j, i, row);
        return;
      case Kind.Sizes: {
        const parsed = parseSizes(text);
        if ('error' in parsed) {
          const field = `jobs[${j}].items[${i}].sizeQuantities`;
          this.error('csv.size-quantities', parsed.error, this.cellSource(binding, row), field);
          return;
        }
        for (const size in parsed.sizes) this.addSize(draft, binding, size, parsed.sizes[size], j, i, row);
        return;
      }
    }
  }

  private typed(binding: Binding, text: string): Value {
    switch (binding.type) {
      case 'integer':
        return toInteger(text);
      case 'boolean':
        return toBoolean(text);
      default:
        // Kept in the document: a copy of its own, never a view of the chunk's text (cells.ts ownCopy).
        return binding.intern ? this.interner.intern(text) : ownCopy(text);
    }
  }

  /** A job or address field: the first row sets it, later rows must agree. */
  private setJobField(job: Obj, binding: Binding, text: string, j: number, row: number): void {
    const target = binding.kind === Kind.Address ? (job.deliveryAddress as Obj) : job;
    const current = target[binding.key];
    if (current === undefined) {
      target[binding.key] = this.typed(binding, text);
      if (binding.slot >= 0) this.fieldRows.set(j, binding.slot, row);
      return;
    }
    // Compare before typing or interning: the usual case (a repeated value) then costs nothing.
    if (current === text) return;
    const value = binding.type === 'string' ? text : this.typed(binding, text);
    if (current === value) return;
    const firstRow = binding.slot >= 0 ? this.fieldRows.get(j, binding.slot) : 0;
    const orderNumber = job.orderNumber as string | undefined;
    const message =
      `${JSON.stringify(value)} conflicts with ${JSON.stringify(current)} ` +
      `${firstRow > 0 ? `on row ${firstRow}` : 'from the mapping constants'} of order ${orderNumber ?? '(blank)'}` +
      " (a job's rows must agree on job-level columns; leave later rows blank)";
    const field = `jobs[${j}].${binding.kind === Kind.Address ? 'deliveryAddress.' : ''}${binding.key}`;
    this.error('csv.conflict', message, this.cellSource(binding, row), field);
  }

  /** Job and address constants: for every job that no row gave the field. */
  private applyJobConstants(plan: ColumnPlan): void {
    const jobConstants = plan.constants.filter(isJobLevel);
    if (jobConstants.length === 0) return;
    for (const job of this.jobs) {
      for (const binding of jobConstants) {
        const target = binding.kind === Kind.Address ? (job.deliveryAddress as Obj) : job;
        if (target[binding.key] === undefined) target[binding.key] = this.typed(binding, binding.constant as string);
      }
    }
  }

  private addSize(
    draft: ItemDraft,
    binding: Binding,
    size: string,
    qty: number | string,
    j: number,
    i: number,
    row: number,
  ): void {
    if (draft.addSize(size, qty)) return;
    const message = `size ${size} is given twice on this row (in sizeQuantities and a size:${size} column, or twice in the cell)`;
    this.error(
      'csv.duplicate-size',
      message,
      this.cellSource(binding, row),
      `jobs[${j}].items[${i}].sizeQuantities.${size}`,
    );
  }

  private cellSource(binding: Binding, row: number): SourceLocation {
    if (row === 0 && binding.index < 0) {
      const written = this.fromHeader?.plan.constantLocations.get(binding.target);
      return written ?? { file: this.mapping?.file ?? this.file };
    }
    if (binding.column === undefined) return { file: this.file, row };
    return { file: this.file, row, columnName: binding.column };
  }
}

/** The orderNumber of a row: its cell, or the mapping's constant; undefined when blank. */
export function orderNumberOf(cells: string[], binding: Binding): string | undefined {
  if (binding.constant === undefined) return cellText(cells, binding);
  return binding.constant.length === 0 ? undefined : translated(binding, binding.constant);
}

/** A cell's text, trimmed and translated by the mapping's `values`; undefined when blank. */
function cellText(cells: string[], binding: Binding): string | undefined {
  const raw = cells[binding.index];
  if (raw === undefined || raw.length === 0) return undefined;
  const text = trimCell(raw);
  return text.length === 0 ? undefined : translated(binding, text);
}

function translated(binding: Binding, text: string): string {
  // A `*` entry is the value of every text the map does not list.
  return binding.values === undefined ? text : (binding.values.get(text) ?? binding.values.get('*') ?? text);
}

function blankFrom(cells: string[], from: number): boolean {
  for (let i = from; i < cells.length; i++) if (cells[i].trim() !== '') return false;
  return true;
}

/**
 * The records of a CSV or spreadsheet input on their way into the document builder: through an
 * expression mapping's rows first when the mapping has expressions (mapping/mapped-rows.ts).
 */
export class TemplateReader {
  private constructor(
    readonly rows: CsvScanHandlers,
    private readonly builder: CsvDocumentBuilder,
    private readonly mapped: MappedRows | undefined,
  ) {}

  static async open(file: string, skipRows: number, mapping: Mapping | undefined): Promise<TemplateReader> {
    if (!isExpressionMapping(mapping)) {
      const builder = new CsvDocumentBuilder(file, skipRows, mapping);
      return new TemplateReader(builder, builder, undefined);
    }
    // Loaded on demand: the expression code (jsonata) is a noticeable part of a start.
    const { MappedRows } = await import('../mapping/mapped-rows.js');
    const mapped = new MappedRows(file, mapping, {
      header: (cells, row) => builder.header(cells, row),
      record: (cells, row, cellRows) => builder.recordFrom(cells, row, cellRows),
    });
    const builder = new CsvDocumentBuilder(file, skipRows, mapped.builderMapping);
    return new TemplateReader(mapped, builder, mapped);
  }

  /** Maps the records taken so far (an expression mapping's expressions may be asynchronous). */
  async drain(): Promise<void> {
    await this.mapped?.drain();
  }

  /**
   * The RawDocument: the source map over the input's rows and columns, the builder's and the
   * mapping's findings, then the reader's own `problems` (errors, at their row when they have
   * one). No document when the input stopped half-way (`broken`), and no "no rows" then either:
   * it would only mislead.
   */
  document(
    input: { file: string; format: ManifestFormat; sha256: string; broken: boolean },
    problems: ReadonlyArray<{ code: string; message: string; row?: number }>,
  ): RawDocument {
    const { file, format, sha256, broken } = input;
    const parts = this.builder.result();
    const diagnostics = broken ? parts.diagnostics.filter((d) => d.code !== 'csv.no-rows') : [...parts.diagnostics];
    const skipped = this.mapped?.complete(parts, diagnostics) ?? [];
    // Every row skipped by the mapping (every order cancelled): an empty document, so that the
    // skipped rows reach the report as what the file holds.
    const doc = parts.doc ?? (skipped.length > 0 && !broken ? { version: 1 as const, jobs: [] } : undefined);
    for (const { code, message, row } of problems)
      diagnostics.push({ severity: 'error', code, message, source: row === undefined ? { file } : { file, row } });
    return {
      file,
      format,
      sha256,
      ...(doc !== undefined && !broken ? { doc } : {}),
      sources: csvSourceMap(file, parts),
      csv: parts.csv,
      ...(skipped.length > 0 ? { skipped } : {}),
      diagnostics,
    };
  }
}

export const MAX_DIAGNOSTICS_PER_CODE = 1000;

/** The one line that stands for the `n - cap` findings of `code` past the cap. */
export function moreOfCode(code: string, n: number, cap: number, file: string): Diagnostic {
  const message = `… and ${n - cap} more ${code} problems (only the first ${cap} are listed)`;
  return { severity: 'error', code, message, source: { file } };
}

/**
 * Diagnostics of one file, at most MAX_DIAGNOSTICS_PER_CODE of each code: most problems in a
 * huge file repeat, and the first ones of each kind are what helps. The rest are counted and
 * summed up in one line per code.
 */
class CappedDiagnostics {
  private readonly kept: Diagnostic[] = [];
  private readonly perCode = new Map<string, number>();

  constructor(
    private readonly file: string,
    private readonly cap: number,
  ) {}

  report(d: Diagnostic): void {
    const n = (this.perCode.get(d.code) ?? 0) + 1;
    this.perCode.set(d.code, n);
    if (n <= this.cap) this.kept.push(d);
  }

  /** The diagnostics kept, then one "… and N more" line per code over the cap. */
  finish(): Diagnostic[] {
    for (const [code, n] of this.perCode) {
      if (n > this.cap) this.kept.push(moreOfCode(code, n, this.cap, this.file));
    }
    return this.kept;
  }
}
