/**
 * Builds the manifest-shaped document from CSV records, one record at a time: rows with the
 * same orderNumber form one job (in order of first appearance, adjacent or not), each row one
 * item. Pure and synchronous; the file I/O lives in read-csv.ts.
 *
 * Job-level columns must agree across a job's rows; a blank cell on a later row means "the
 * same". The first row that sets a field wins and is remembered (compactly, in an Int32Array)
 * both for conflict messages and for source locations.
 *
 * Memory matters here (a million rows must fit with room to spare), hence: strings that repeat
 * are interned, items are built as compact literals (object-factory.ts), and nothing per cell
 * is kept beyond the value itself.
 */
import type { CsvOrigin, Diagnostic, SourceLocation } from '../model.js';
import type { Mapping } from '../mapping/model.js';
import { Kind, isJobLevel, planColumns, type Binding, type ColumnPlan } from './column-plan.js';
import { TEMPLATE_COLUMNS } from './template.js';
import { StringInterner, parseSizes, toBoolean, toInteger, trimCell } from './cells.js';
import { Compactor, literalBuilder, type Build } from './object-factory.js';

type Value = string | number | boolean;
type Obj = Record<string, unknown>;

const TEMPLATE_INDEX: ReadonlyMap<string, number> = new Map(TEMPLATE_COLUMNS.map((c, i) => [c.name, i]));

/** Most problems in a huge file repeat; the first ones of each kind are what helps. */
export const MAX_DIAGNOSTICS_PER_CODE = 1000;

export interface CsvDocumentParts {
  doc?: { version: 1; jobs: Obj[] };
  csv: CsvOrigin;
  headerRow: number;
  slotRows: Int32Array;
  jobSlots: ReadonlyMap<string, number>;
  jobSlotCount: number;
  fieldColumns: ReadonlyMap<string, string>;
  constantLocations: ReadonlyMap<string, SourceLocation>;
  diagnostics: Diagnostic[];
}

/** The item being assembled from one row; reused for every row. */
interface ItemScratch {
  values: unknown[];
  /** Bit k set = values[k] holds a value for itemKeys[k]. */
  mask: number;
  /** The same for attributes (attrKeys). */
  attrValues: unknown[];
  attrMask: number;
  sizes: Obj | undefined;
}

export class CsvDocumentBuilder {
  private plan: ColumnPlan | undefined;
  private header: string[] = [];
  private headerRow = 0;
  private readonly jobs: Obj[] = [];
  /** Per job: items so far. */
  private jobItemCount = new Int32Array(1024);
  /**
   * Every item in file order, with its job and row. Each job's `items` and `itemRows` are made
   * at the end, exact-size: arrays grown by push per job reserve ~17 slots each, and copying
   * them exact afterwards left ~45 MB of discarded arrays (a million rows) in the old
   * generation, where nothing collected them before the reports were written.
   */
  private readonly flatItems: Obj[] = [];
  private flatJob = new Int32Array(4096);
  private flatRow = new Int32Array(4096);
  private itemRows: number[][] = [];
  private readonly jobIndex = new Map<string, number>();
  private slotRows = new Int32Array(0);
  private stride = 1;
  private readonly interner = new StringInterner();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly perCode = new Map<string, number>();

  /** Item keys in output order (columns, then constants, then attributes, sizeQuantities). */
  private itemKeys: string[] = [];
  /** Per plan.columns / plan.constants entry: its item key slot, or -1. */
  private columnSlots: number[] = [];
  private constantSlots: number[] = [];
  private attributesSlot = 0;
  private sizesSlot = 0;
  private readonly builders = new Map<number, Build>();
  /** Attribute names in output order; per plan entry its attribute slot, or -1. */
  private attrKeys: string[] = [];
  private columnAttrSlots: number[] = [];
  private constantAttrSlots: number[] = [];
  private readonly attrBuilders = new Map<number, Build>();
  private readonly sizesCompactor = new Compactor();
  /** Job keys: orderNumber, job fields (template order), deliveryAddress, items; address keys likewise. */
  private jobKeys: string[] = [];
  private addressKeys: string[] = [];
  /** Per plan.columns entry: its bit in jobKeys or addressKeys (by its kind), or -1. */
  private jobBits: number[] = [];
  private jobValues: unknown[] = [];
  private addressValues: unknown[] = [];
  private readonly jobBuilders = new Map<number, Build>();
  private readonly addressBuilders = new Map<number, Build>();
  private readonly scratch: ItemScratch = { values: [], mask: 0, attrValues: [], attrMask: 0, sizes: undefined };

  constructor(
    private readonly file: string,
    private readonly skipRows: number,
    private readonly mapping?: Mapping,
  ) {}

  onHeader(cells: string[], row: number): void {
    this.header = cells;
    this.headerRow = row;
    const plan = planColumns(cells, this.file, row, this.mapping);
    this.plan = plan;
    this.stride = plan.jobSlotCount;
    this.slotRows = new Int32Array(1024 * this.stride);
    for (const d of plan.diagnostics) this.report(d);
    const slotOf = new Map<string, number>();
    const slot = (b: Binding): number => {
      if (b.kind !== Kind.Item) return -1;
      let s = slotOf.get(b.key);
      if (s === undefined) {
        s = this.itemKeys.length;
        this.itemKeys.push(b.key);
        slotOf.set(b.key, s);
      }
      return s;
    };
    // Job and address keys in template order, whatever the column order.
    const order = (b: Binding) => TEMPLATE_INDEX.get(b.key) ?? 0;
    const jobLevel = plan.columns.filter(isJobLevel).sort((a, b) => order(a) - order(b));
    this.jobKeys = ['orderNumber', ...jobLevel.filter((b) => b.kind === Kind.Job).map((b) => b.key), 'deliveryAddress', 'items'];
    this.addressKeys = jobLevel.filter((b) => b.kind === Kind.Address).map((b) => b.key);
    this.jobBits = plan.columns.map((b) =>
      b.kind === Kind.Job ? this.jobKeys.indexOf(b.key) : b.kind === Kind.Address ? this.addressKeys.indexOf(b.key) : -1,
    );
    this.jobValues = new Array<unknown>(this.jobKeys.length).fill(undefined);
    this.addressValues = new Array<unknown>(this.addressKeys.length).fill(undefined);
    this.columnSlots = plan.columns.map(slot);
    this.constantSlots = plan.constants.map(slot);
    const attrSlotOf = new Map<string, number>();
    const attrSlot = (b: Binding): number => {
      if (b.kind !== Kind.Attribute) return -1;
      let s = attrSlotOf.get(b.key);
      if (s === undefined) {
        s = this.attrKeys.length;
        this.attrKeys.push(b.key);
        attrSlotOf.set(b.key, s);
      }
      return s;
    };
    this.columnAttrSlots = plan.columns.map(attrSlot);
    this.constantAttrSlots = plan.constants.map(attrSlot);
    if (this.attrKeys.length > 30) {
      // Bit masks hold 31 flags; beyond that (never seen in practice) fall back to one slot each.
      this.report({ severity: 'error', code: 'csv.too-many-columns', message: `at most 30 attr: columns are supported, found ${this.attrKeys.length}`, source: { file: this.file, row } });
      this.attrKeys.length = 30;
    }
    this.attributesSlot = this.itemKeys.push('attributes') - 1;
    this.sizesSlot = this.itemKeys.push('sizeQuantities') - 1;
    this.scratch.values = new Array<unknown>(this.itemKeys.length).fill(undefined);
  }

  onRecord(cells: string[], row: number): void {
    const plan = this.plan;
    if (plan === undefined || plan.orderNumber === undefined) return; // reported at the header

    // Which job: by orderNumber; a row without one becomes a job of its own, so schema
    // validation reports the missing orderNumber at this row.
    const orderNumber = this.orderNumberOf(cells, plan.orderNumber);
    let j = orderNumber === undefined ? undefined : this.jobIndex.get(orderNumber);
    if (j === undefined) j = this.newJob(orderNumber, row, plan.orderNumber, cells, plan);
    const job = this.jobs[j];
    const i = this.jobItemCount[j];

    if (cells.length !== plan.width && !(cells.length > plan.width && blankFrom(cells, plan.width))) {
      this.report({
        severity: 'error',
        code: 'csv.row-length',
        message: `row has ${cells.length} cells, the header has ${plan.width}`,
        field: `jobs[${j}].items[${i}]`,
        source: { file: this.file, row },
      });
    }

    const s = this.scratch;
    s.mask = 0;
    s.attrMask = 0;
    s.sizes = undefined;
    const bindings = plan.columns;
    for (let b = 0; b < bindings.length; b++) {
      const binding = bindings[b];
      const raw = cells[binding.index];
      if (raw === undefined || raw.length === 0) continue;
      let text = trimCell(raw);
      if (text.length === 0) continue;
      if (binding.values !== undefined) text = binding.values.get(text) ?? text;
      if (binding.kind === Kind.Job || binding.kind === Kind.Address) this.setJobField(job, binding, text, j, row);
      else this.assignItem(binding, binding.kind === Kind.Attribute ? this.columnAttrSlots[b] : this.columnSlots[b], text, j, i, row);
    }
    // Item constants fill what this row left blank; job constants wait for all of the job's rows.
    const constants = plan.constants;
    for (let c = 0; c < constants.length; c++) {
      const binding = constants[c];
      const slot = binding.kind === Kind.Attribute ? this.constantAttrSlots[c] : this.constantSlots[c];
      if (!isJobLevel(binding) && !this.itemHas(binding, slot)) this.assignItem(binding, slot, binding.constant as string, j, i, 0);
    }

    if (s.attrMask !== 0) {
      s.values[this.attributesSlot] = this.builderFor(s.attrMask, this.attrKeys, this.attrBuilders)(s.attrValues);
      s.mask |= 1 << this.attributesSlot;
    }
    if (s.sizes !== undefined) {
      s.values[this.sizesSlot] = this.sizesCompactor.compact(s.sizes, false);
      s.mask |= 1 << this.sizesSlot;
    }
    const n = this.flatItems.length;
    if (n === this.flatJob.length) {
      this.flatJob = grow(this.flatJob);
      this.flatRow = grow(this.flatRow);
    }
    this.flatItems.push(this.builderFor(s.mask, this.itemKeys, this.builders)(s.values));
    this.flatJob[n] = j;
    this.flatRow[n] = row;
    this.jobItemCount[j] = i + 1;
  }

  result(): CsvDocumentParts {
    this.distributeItems();
    const csv: CsvOrigin = { header: this.header, skipRows: this.skipRows, itemRows: this.itemRows };
    const base = {
      csv,
      headerRow: this.headerRow || this.skipRows + 1,
      // Exact size: the doubling buffer may be half empty, and it stays alive with the source map.
      slotRows: this.slotRows.slice(0, this.jobs.length * this.stride),
      jobSlots: this.plan?.jobSlots ?? new Map<string, number>(),
      jobSlotCount: this.stride,
      fieldColumns: this.plan?.fieldColumns ?? new Map<string, string>(),
      constantLocations: this.plan?.constantLocations ?? new Map<string, SourceLocation>(),
    };
    if (this.plan === undefined) {
      this.report({ severity: 'error', code: 'csv.no-rows', message: 'the file is empty: no header and no rows', source: { file: this.file } });
      return { ...base, diagnostics: this.finishDiagnostics() };
    }
    if (this.plan.orderNumber === undefined) return { ...base, diagnostics: this.finishDiagnostics() };
    if (this.jobs.length === 0) {
      this.report({ severity: 'error', code: 'csv.no-rows', message: 'the file has a header but no rows', source: { file: this.file, row: this.headerRow } });
      return { ...base, diagnostics: this.finishDiagnostics() };
    }
    this.applyJobConstants();
    return { ...base, doc: { version: 1, jobs: this.jobs }, diagnostics: this.finishDiagnostics() };
  }

  /** Gives every job its `items` and `itemRows`, exact-size, in file order (a counting sort). */
  private distributeItems(): void {
    const jobCount = this.jobs.length;
    const total = this.flatItems.length;
    const start = new Int32Array(jobCount + 1);
    for (let j = 0; j < jobCount; j++) start[j + 1] = start[j] + this.jobItemCount[j];
    const at = start.slice(0, jobCount);
    const order = new Int32Array(total);
    for (let n = 0; n < total; n++) order[at[this.flatJob[n]]++] = n;
    // One reused scratch array; slice() then makes each job's arrays packed and exact.
    const items: Obj[] = [];
    const rows: number[] = [];
    const itemRows = new Array<number[]>(jobCount);
    for (let j = 0; j < jobCount; j++) {
      items.length = 0;
      rows.length = 0;
      for (let p = start[j]; p < start[j + 1]; p++) {
        items.push(this.flatItems[order[p]]);
        rows.push(this.flatRow[order[p]]);
      }
      this.jobs[j].items = items.slice();
      itemRows[j] = rows.slice();
    }
    this.itemRows = itemRows;
    this.flatItems.length = 0;
    this.flatJob = this.flatRow = this.jobItemCount = new Int32Array(0);
  }

  private orderNumberOf(cells: string[], binding: Binding): string | undefined {
    let text = binding.constant ?? trimCell(cells[binding.index] ?? '');
    if (text.length === 0) return undefined;
    if (binding.values !== undefined) text = binding.values.get(text) ?? text;
    return text;
  }

  /**
   * A job is built from its first row as compact literals (job and address; see
   * object-factory.ts): almost always every job-level value is on that row. A value first given
   * on a later row is added the ordinary way.
   */
  private newJob(orderNumber: string | undefined, row: number, binding: Binding, cells: string[], plan: ColumnPlan): number {
    const j = this.jobs.length;
    const needed = (j + 1) * this.stride;
    if (needed > this.slotRows.length) {
      const grown = new Int32Array(this.slotRows.length * 2);
      grown.set(this.slotRows);
      this.slotRows = grown;
    }
    const jobValues = this.jobValues;
    const addressValues = this.addressValues;
    let jobMask = 0;
    let addressMask = 0;
    if (orderNumber !== undefined) {
      jobValues[0] = orderNumber;
      jobMask = 1;
      if (binding.index >= 0) this.slotRows[j * this.stride + binding.slot] = row;
    }
    const columns = plan.columns;
    for (let b = 0; b < columns.length; b++) {
      const bit = this.jobBits[b];
      if (bit < 0) continue;
      const c = columns[b];
      const raw = cells[c.index];
      if (raw === undefined || raw.length === 0) continue;
      let text = trimCell(raw);
      if (text.length === 0) continue;
      if (c.values !== undefined) text = c.values.get(text) ?? text;
      if (c.kind === Kind.Address) {
        addressValues[bit] = this.typed(c, text);
        addressMask |= 1 << bit;
      } else {
        jobValues[bit] = this.typed(c, text);
        jobMask |= 1 << bit;
      }
      this.slotRows[j * this.stride + c.slot] = row;
    }
    jobValues[this.jobKeys.length - 2] = this.builderFor(addressMask, this.addressKeys, this.addressBuilders)(addressValues);
    jobValues[this.jobKeys.length - 1] = NO_ITEMS; // set in distributeItems()
    jobMask |= (1 << (this.jobKeys.length - 2)) | (1 << (this.jobKeys.length - 1));
    const job = this.builderFor(jobMask, this.jobKeys, this.jobBuilders)(jobValues);
    this.jobs.push(job);
    if (j === this.jobItemCount.length) this.jobItemCount = grow(this.jobItemCount);
    if (orderNumber !== undefined) this.jobIndex.set(orderNumber, j);
    return j;
  }

  /** The literal builder for the keys whose bits are set in `mask`. */
  private builderFor(mask: number, allKeys: string[], cache: Map<number, Build>): Build {
    let build = cache.get(mask);
    if (build === undefined) {
      const keys: string[] = [];
      const slots: number[] = [];
      for (let k = 0; k < allKeys.length; k++) {
        if (mask & (1 << k)) {
          keys.push(allKeys[k]);
          slots.push(k);
        }
      }
      build = literalBuilder(keys, slots);
      cache.set(mask, build);
    }
    return build;
  }

  private itemHas(binding: Binding, slot: number): boolean {
    const s = this.scratch;
    switch (binding.kind) {
      case Kind.Attribute:
        return slot < 0 || slot >= 30 || (s.attrMask & (1 << slot)) !== 0;
      case Kind.Size:
        return s.sizes?.[binding.key] !== undefined;
      case Kind.Sizes:
        return s.sizes !== undefined;
      default:
        return (s.mask & (1 << slot)) !== 0;
    }
  }

  /** Puts one cell's text into the row's item. `row` 0 = from a mapping constant. */
  private assignItem(binding: Binding, slot: number, text: string, j: number, i: number, row: number): void {
    const s = this.scratch;
    switch (binding.kind) {
      case Kind.Item:
        s.values[slot] = this.typed(binding, text);
        s.mask |= 1 << slot;
        return;
      case Kind.Attribute:
        if (slot < 0 || slot >= 30) return;
        s.attrValues[slot] = this.interner.intern(text);
        s.attrMask |= 1 << slot;
        return;
      case Kind.Size:
        this.addSize(binding, binding.key, toInteger(text), j, i, row);
        return;
      case Kind.Sizes: {
        const parsed = parseSizes(text);
        if ('error' in parsed) {
          this.report({
            severity: 'error',
            code: 'csv.size-quantities',
            message: parsed.error,
            field: `jobs[${j}].items[${i}].sizeQuantities`,
            source: this.cellSource(binding, row),
          });
          return;
        }
        for (const size in parsed.sizes) this.addSize(binding, size, parsed.sizes[size], j, i, row);
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
        return binding.intern ? this.interner.intern(text) : text;
    }
  }

  /** A job or address field: the first row sets it, later rows must agree. */
  private setJobField(job: Obj, binding: Binding, text: string, j: number, row: number): void {
    const target = binding.kind === Kind.Address ? (job.deliveryAddress as Obj) : job;
    const current = target[binding.key];
    const slot = j * this.stride + binding.slot;
    if (current === undefined) {
      target[binding.key] = this.typed(binding, text);
      if (binding.slot >= 0) this.slotRows[slot] = row;
      return;
    }
    // Compare before typing or interning: the usual case (a repeated value) then costs nothing.
    if (current === text) return;
    const value = binding.type === 'string' ? text : this.typed(binding, text);
    if (current === value) return;
    const firstRow = binding.slot >= 0 ? this.slotRows[slot] : 0;
    const orderNumber = this.jobs[j].orderNumber as string | undefined;
    this.report({
      severity: 'error',
      code: 'csv.conflict',
      message:
        `${JSON.stringify(value)} conflicts with ${JSON.stringify(current)} ` +
        `${firstRow > 0 ? `on row ${firstRow}` : 'from the mapping constants'} of order ${orderNumber ?? '(blank)'}` +
        " (a job's rows must agree on job-level columns; leave later rows blank)",
      field: `jobs[${j}].${binding.kind === Kind.Address ? 'deliveryAddress.' : ''}${binding.key}`,
      source: this.cellSource(binding, row),
    });
  }

  /** Job and address constants: for every job that no row gave the field. */
  private applyJobConstants(): void {
    const jobConstants = (this.plan?.constants ?? []).filter(isJobLevel);
    if (jobConstants.length === 0) return;
    for (let j = 0; j < this.jobs.length; j++) {
      const job = this.jobs[j];
      for (const binding of jobConstants) {
        const target = binding.kind === Kind.Address ? (job.deliveryAddress as Obj) : job;
        if (target[binding.key] === undefined) target[binding.key] = this.typed(binding, binding.constant as string);
      }
    }
  }

  private addSize(binding: Binding, size: string, qty: number | string, j: number, i: number, row: number): void {
    const sizes = (this.scratch.sizes ??= {});
    if (sizes[size] !== undefined) {
      this.report({
        severity: 'error',
        code: 'csv.duplicate-size',
        message: `size ${size} is given twice on this row (in sizeQuantities and a size:${size} column, or twice in the cell)`,
        field: `jobs[${j}].items[${i}].sizeQuantities.${size}`,
        source: this.cellSource(binding, row),
      });
      return;
    }
    sizes[size] = qty;
  }

  private cellSource(binding: Binding, row: number): SourceLocation {
    if (row === 0 && binding.index < 0) {
      return this.plan?.constantLocations.get(binding.target) ?? { file: this.mapping?.file ?? this.file };
    }
    return binding.column === undefined ? { file: this.file, row } : { file: this.file, row, columnName: binding.column };
  }

  private report(d: Diagnostic): void {
    const n = (this.perCode.get(d.code) ?? 0) + 1;
    this.perCode.set(d.code, n);
    if (n <= MAX_DIAGNOSTICS_PER_CODE) this.diagnostics.push(d);
  }

  private finishDiagnostics(): Diagnostic[] {
    for (const [code, n] of this.perCode) {
      if (n > MAX_DIAGNOSTICS_PER_CODE) {
        this.diagnostics.push({
          severity: 'error',
          code,
          message: `… and ${n - MAX_DIAGNOSTICS_PER_CODE} more ${code} problems (only the first ${MAX_DIAGNOSTICS_PER_CODE} are listed)`,
          source: { file: this.file },
        });
      }
    }
    return this.diagnostics;
  }
}

/** Shared placeholder until a job's items are distributed (never mutated). */
const NO_ITEMS: Obj[] = [];

function grow(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(a.length * 2);
  grown.set(a);
  return grown;
}

function blankFrom(cells: string[], from: number): boolean {
  for (let i = from; i < cells.length; i++) if (cells[i].trim() !== '') return false;
  return true;
}
