/**
 * The shape of the objects a CSV file becomes, fixed once its header is read: which keys a
 * job, its delivery address, an item and an item's attributes may have, in output order, and
 * for each column and mapping constant the slot its value fills. Rows then only set values
 * and bits; objects are built as compact literals (object-factory.ts), one builder per set of
 * keys that occurs.
 */
import type { Diagnostic } from '../model.js';
import { Kind, isJobLevel, type Binding, type ColumnPlan } from './column-plan.js';
import { literalBuilder, type Build } from './object-factory.js';
import { TEMPLATE_COLUMNS } from './template.js';

type Obj = Record<string, unknown>;

/** Which keys an object has is a bit mask over its shape's keys: 31 bits, so at most 30 attributes. */
export const MAX_ATTRIBUTES = 30;

const TEMPLATE_INDEX: ReadonlyMap<string, number> = new Map(TEMPLATE_COLUMNS.map((c, i) => [c.name, i]));

/** The keys one kind of object may have, a scratch array of their values, and a builder per key set. */
export class LiteralShape {
  /** Values by slot, reused for every object of this shape. */
  readonly values: unknown[];
  private readonly builders = new Map<number, Build>();

  constructor(readonly keys: readonly string[]) {
    this.values = new Array<unknown>(keys.length).fill(undefined);
  }

  /** The object with the keys whose bits are set in `mask`, each with its value in `values`. */
  build(mask: number): Obj {
    let build = this.builders.get(mask);
    if (build === undefined) {
      const keys: string[] = [];
      const slots: number[] = [];
      for (let k = 0; k < this.keys.length; k++) {
        if (mask & (1 << k)) {
          keys.push(this.keys[k]);
          slots.push(k);
        }
      }
      build = literalBuilder(keys, slots);
      this.builders.set(mask, build);
    }
    return build(this.values);
  }
}

export class DocumentLayout {
  /** orderNumber, the job fields the file has (template order), deliveryAddress, items. */
  readonly job: LiteralShape;
  /** The address fields the file has, in template order. */
  readonly address: LiteralShape;
  /** Item fields (columns, then constants), then attributes and sizeQuantities. */
  readonly item: LiteralShape;
  /** Attribute names, columns then constants, at most MAX_ATTRIBUTES. */
  readonly attributes: LiteralShape;
  /**
   * Per plan.columns / plan.constants entry: its slot in the shape its kind fills (job,
   * address, item or attributes), or -1 (sizes, and attributes beyond the limit).
   */
  readonly columnSlots: number[];
  readonly constantSlots: number[];
  readonly attributesSlot: number;
  readonly sizesSlot: number;
  readonly deliveryAddressSlot: number;
  readonly itemsSlot: number;
  /** A csv.too-many-columns message, when the file has more attributes than masks can hold. */
  readonly problem?: Omit<Diagnostic, 'source'>;

  constructor(plan: ColumnPlan) {
    // Job and address keys in template order, whatever the column order.
    const order = (b: Binding) => TEMPLATE_INDEX.get(b.key) ?? 0;
    const jobLevel = plan.columns.filter(isJobLevel).sort((a, b) => order(a) - order(b));
    const jobKeys = ['orderNumber', ...keysOf(jobLevel, Kind.Job), 'deliveryAddress', 'items'];
    const addressKeys = keysOf(jobLevel, Kind.Address);
    const itemKeys: string[] = [];
    const attrKeys: string[] = [];
    const slotsOf = (bindings: Binding[]): number[] =>
      bindings.map((b) => {
        switch (b.kind) {
          case Kind.Job:
            return jobKeys.indexOf(b.key);
          case Kind.Address:
            return addressKeys.indexOf(b.key);
          case Kind.Item:
            return slotOf(itemKeys, b.key);
          case Kind.Attribute:
            return slotOf(attrKeys, b.key);
          default:
            return -1;
        }
      });
    this.columnSlots = slotsOf(plan.columns);
    this.constantSlots = slotsOf(plan.constants);
    if (attrKeys.length > MAX_ATTRIBUTES) {
      // Never seen in practice; the attributes beyond the limit are left out, and reported.
      this.problem = {
        severity: 'error',
        code: 'csv.too-many-columns',
        message: `at most ${MAX_ATTRIBUTES} attr: columns are supported, found ${attrKeys.length}`,
      };
      attrKeys.length = MAX_ATTRIBUTES;
      const within = (slot: number, b: Binding) => (b.kind === Kind.Attribute && slot >= MAX_ATTRIBUTES ? -1 : slot);
      this.columnSlots = this.columnSlots.map((slot, k) => within(slot, plan.columns[k]));
      this.constantSlots = this.constantSlots.map((slot, k) => within(slot, plan.constants[k]));
    }
    this.attributesSlot = itemKeys.push('attributes') - 1;
    this.sizesSlot = itemKeys.push('sizeQuantities') - 1;
    this.deliveryAddressSlot = jobKeys.length - 2;
    this.itemsSlot = jobKeys.length - 1;
    this.job = new LiteralShape(jobKeys);
    this.address = new LiteralShape(addressKeys);
    this.item = new LiteralShape(itemKeys);
    this.attributes = new LiteralShape(attrKeys);
  }
}

function keysOf(bindings: Binding[], kind: Kind): string[] {
  return bindings.filter((b) => b.kind === kind).map((b) => b.key);
}

/** The slot of `key` in `keys`, appending it the first time. */
function slotOf(keys: string[], key: string): number {
  const slot = keys.indexOf(key);
  return slot >= 0 ? slot : keys.push(key) - 1;
}
