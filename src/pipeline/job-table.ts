import type { Diagnostic } from '../manifest/model.js';
import type { JobEstimate } from '../resolve/estimate/model.js';
import { StringColumn } from '../core/string-column.js';

/**
 * What an input holds of its jobs between their plan stages and their submit, in columns of a
 * fixed size a job, where each job's state held objects and strings of its own: all or nothing
 * holds every ready job until the last one is planned, which at a million jobs was most of the
 * memory a run has (`npm run bench -- --jobs 100000 --memory`, heap snapshots; figures in
 * docs/performance.md). A job's fingerprints are 32 raw bytes each (their hex text is made
 * when read: the ledger, resolveAgain's check and the saved plan see the very same text), its
 * estimate the two figures still read of it, its due date and currency an index into the few
 * values an input has, its order number bytes in a column. A parked job's state is an object of one field (its index) whose other keys read
 * these columns.
 */

/** The findings of a job that has none: one frozen array shared by every such job. */
export const NO_FINDINGS: readonly Diagnostic[] = Object.freeze([]);

/** What a ready job keeps of its estimate: what the guardrails, the report and the saved plan read. */
export type KeptEstimate = Pick<JobEstimate, 'total' | 'currency'>;

/** What a parked job keeps of its resolution (a KeptResolution, job-state.ts, is made from it when read). */
export interface Parking {
  /** requestHash (saved-plan.ts) of the request its dry run validated: 64 hex digits. */
  readonly request: string;
  /** contentKey (guard-notes.ts) of that request: 32 hex digits. */
  readonly content: string;
  readonly estimate: KeptEstimate;
  readonly dateDue?: string | null;
}

const DIGEST = 32;
const HEX = /^[0-9a-f]{64}$/;
const CONTENT = 16;
const CONTENT_HEX = /^[0-9a-f]{32}$/;
// meta: bit 0 the fingerprint is in the arena, bit 1 the job is parked, bit 2 it has a total,
// bits 3-7 its currency (0: none), bits 8-31 its due date (0: none, 1: null).
const HASHED = 1;
const PARKED = 2;
const HAS_TOTAL = 4;
const CURRENCY_SHIFT = 3;
const CURRENCY_MASK = 0x1f;
const DUE_SHIFT = 8;
const MAX_CURRENCIES = CURRENCY_MASK;
const MAX_DUES = 2 ** 24 - 2;

/** Strings interned to small numbers from `first` on (an input has a handful of currencies and due dates). */
export class Interned {
  private readonly numbers = new Map<string, number>();
  private readonly values: string[] = [];

  constructor(
    private readonly first: number,
    private readonly max: number,
  ) {}

  /** The number of `value`, or undefined when the table is full. */
  numberOf(value: string): number | undefined {
    const known = this.numbers.get(value);
    if (known !== undefined) return known;
    if (this.values.length >= this.max) return undefined;
    this.values.push(value);
    const n = this.values.length - 1 + this.first;
    this.numbers.set(value, n);
    return n;
  }

  valueOf(n: number): string {
    const value = this.values[n - this.first];
    if (value === undefined) throw new Error(`no interned value ${n}`);
    return value;
  }
}

export class JobTable {
  /** The fingerprint the ledger keeps (jobHash), once asked: 32 bytes a job. */
  private readonly fingerprints: Buffer;
  /** A parked job's requestHash: 32 bytes a job. */
  private readonly requests: Buffer;
  /** A parked job's content key: 16 bytes a job. */
  private readonly contents: Buffer;
  private readonly totals: Float64Array;
  private readonly meta: Uint32Array;
  private readonly currencies = new Interned(1, MAX_CURRENCIES);
  private readonly dues = new Interned(2, MAX_DUES);
  /** A parked job's findings (warnings), for the few that have any. */
  private readonly findings = new Map<number, readonly Diagnostic[]>();
  /** Every job's order number, as check read it. */
  private readonly names: StringColumn;

  /**
   * `size` jobs; `fingerprintOf` is the fingerprint (64 hex digits) of job `index`, made when
   * first asked; `names`: the jobs' order numbers where they are kept already (a windowed CSV's
   * index), used as they are.
   */
  constructor(
    readonly size: number,
    private readonly fingerprintOf: (index: number) => string,
    names?: StringColumn,
  ) {
    this.fingerprints = Buffer.alloc(size * DIGEST);
    this.requests = Buffer.alloc(size * DIGEST);
    this.contents = Buffer.alloc(size * CONTENT);
    this.totals = new Float64Array(size);
    this.meta = new Uint32Array(size);
    if (names !== undefined && names.size !== size)
      throw new RangeError(`${names.size} order numbers for a table of ${size} jobs`);
    this.names = names ?? new StringColumn(size);
  }

  /** Keeps job `index`'s order number. */
  setOrderNumber(index: number, orderNumber: string): void {
    this.names.set(index, orderNumber);
  }

  /** Job `index`'s order number (setOrderNumber's), made anew at each read. */
  orderNumber(index: number): string | undefined {
    return this.names.get(index);
  }

  /** Job `index`'s fingerprint: made on first use and kept in the arena, its text made on each read. */
  hash(index: number): string {
    const meta = this.at(index);
    if (meta & HASHED) return this.fingerprints.toString('hex', index * DIGEST, (index + 1) * DIGEST);
    const text = this.fingerprintOf(index);
    if (!HEX.test(text)) throw new Error(`job ${index}: a fingerprint of 64 hex digits expected`);
    this.fingerprints.write(text, index * DIGEST, DIGEST, 'hex');
    this.meta[index] = meta | HASHED;
    return text;
  }

  /**
   * Keeps what a ready job keeps of its resolution, in the columns; false (nothing kept) when
   * it does not fit them (an input of more currencies or due dates than they number): the job
   * then keeps its state as it is.
   */
  park(index: number, kept: Parking, findings: readonly Diagnostic[]): boolean {
    const meta = this.at(index);
    if (!HEX.test(kept.request) || !CONTENT_HEX.test(kept.content)) return false;
    const currency = kept.estimate.currency === undefined ? 0 : this.currencies.numberOf(kept.estimate.currency);
    const due = kept.dateDue === undefined ? 0 : kept.dateDue === null ? 1 : this.dues.numberOf(kept.dateDue);
    if (currency === undefined || due === undefined) return false;
    this.requests.write(kept.request, index * DIGEST, DIGEST, 'hex');
    this.contents.write(kept.content, index * CONTENT, CONTENT, 'hex');
    const total = kept.estimate.total;
    this.totals[index] = total ?? 0;
    this.meta[index] =
      (meta & HASHED) |
      PARKED |
      (total === undefined ? 0 : HAS_TOTAL) |
      (currency << CURRENCY_SHIFT) |
      ((due << DUE_SHIFT) >>> 0);
    if (findings.length > 0) this.findings.set(index, findings);
    else this.findings.delete(index);
    return true;
  }

  /** What job `index` parked (park). */
  parked(index: number): Parking {
    const meta = this.at(index);
    if (!(meta & PARKED)) throw new Error(`job ${index} is not parked`);
    const currency = (meta >>> CURRENCY_SHIFT) & CURRENCY_MASK;
    const due = meta >>> DUE_SHIFT;
    const estimate: KeptEstimate = {
      total: meta & HAS_TOTAL ? this.totals[index] : undefined,
      currency: currency === 0 ? undefined : this.currencies.valueOf(currency),
    };
    const request = this.requests.toString('hex', index * DIGEST, (index + 1) * DIGEST);
    const content = this.contents.toString('hex', index * CONTENT, (index + 1) * CONTENT);
    if (due === 0) return { request, content, estimate };
    return { request, content, estimate, dateDue: due === 1 ? null : this.dues.valueOf(due) };
  }

  /** A parked job's findings. */
  findingsOf(index: number): readonly Diagnostic[] {
    return this.findings.get(index) ?? NO_FINDINGS;
  }

  private at(index: number): number {
    const meta = this.meta[index];
    if (meta === undefined || !Number.isInteger(index)) throw new Error(`no job ${index} in this table`);
    return meta;
  }
}
