/**
 * The item being assembled from one row, reused for every row: values go into the layout's
 * scratch arrays and bits into masks, and `build()` makes the compact item at the end.
 */
import { Kind, type Binding } from './column-plan.js';
import type { DocumentLayout } from './document-layout.js';
import { Compactor } from './object-factory.js';

type Obj = Record<string, unknown>;

export class ItemDraft {
  /** Bit k set = the item shape's values[k] holds a value for this row. */
  private mask = 0;
  /** The same for the attributes shape. */
  private attrMask = 0;
  private sizes: Record<string, number | string> | undefined;
  private readonly sizesCompactor = new Compactor();

  constructor(private readonly layout: DocumentLayout) {}

  /** Starts the next row's item. */
  reset(): void {
    this.mask = 0;
    this.attrMask = 0;
    this.sizes = undefined;
  }

  /** Whether this row already gave the binding's field (`slot`: its layout slot). */
  has(binding: Binding, slot: number): boolean {
    switch (binding.kind) {
      case Kind.Attribute:
        return slot < 0 || (this.attrMask & (1 << slot)) !== 0;
      case Kind.Size:
        return this.sizes?.[binding.key] !== undefined;
      case Kind.Sizes:
        return this.sizes !== undefined;
      default:
        return (this.mask & (1 << slot)) !== 0;
    }
  }

  set(slot: number, value: unknown): void {
    this.layout.item.values[slot] = value;
    this.mask |= 1 << slot;
  }

  /** An attribute; a slot of -1 (beyond the limit, reported at the header) is dropped. */
  setAttribute(slot: number, value: string): void {
    if (slot < 0) return;
    this.layout.attributes.values[slot] = value;
    this.attrMask |= 1 << slot;
  }

  /** Adds one size's quantity; false, leaving the first, when the row gives that size twice. */
  addSize(size: string, qty: number | string): boolean {
    this.sizes ??= {};
    const sizes = this.sizes;
    if (sizes[size] !== undefined) return false;
    sizes[size] = qty;
    return true;
  }

  build(): Obj {
    const { item, attributes, attributesSlot, sizesSlot } = this.layout;
    if (this.attrMask !== 0) this.set(attributesSlot, attributes.build(this.attrMask));
    // Size runs keep the order written (S, M, L), not template order.
    if (this.sizes !== undefined) this.set(sizesSlot, this.sizesCompactor.compact(this.sizes, false));
    return item.build(this.mask);
  }
}
