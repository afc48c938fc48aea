/**
 * The item being assembled from one row, reused for every row: values go into the layout's
 * scratch arrays and bits into masks, and `build()` makes the compact item at the end.
 */
import { Kind, type Binding } from './column-plan.js';
import type { DocumentLayout } from './document-layout.js';
import { literalBuilder, type Build } from './object-factory.js';

type Obj = Record<string, unknown>;

export class ItemDraft {
  /** Bit k set = the item shape's values[k] holds a value for this row. */
  private mask = 0;
  /** The same for the attributes shape. */
  private attrMask = 0;
  private sizes: Record<string, number | string> | undefined;
  /** The sizes' names in the order added (reused): which compact literal the sizes become. */
  private readonly sizeNames: string[] = [];
  /** How many of sizeNames are this row's (the array is reused, never shortened). */
  private sizeCount = 0;
  private readonly sizeShapes = new SizeShapes();

  constructor(private readonly layout: DocumentLayout) {}

  /** Starts the next row's item. */
  reset(): void {
    this.mask = 0;
    this.attrMask = 0;
    this.sizes = undefined;
    this.sizeCount = 0;
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

  setAttribute(slot: number, value: string): void {
    this.layout.attributes.values[slot] = value;
    this.attrMask |= 1 << slot;
  }

  /** Adds one size's quantity; false, leaving the first, when the row gives that size twice. */
  addSize(size: string, qty: number | string): boolean {
    this.sizes ??= {};
    const sizes = this.sizes;
    if (sizes[size] !== undefined) return false;
    sizes[size] = qty;
    this.sizeNames[this.sizeCount++] = size;
    return true;
  }

  build(): Obj {
    const { item, attributes, attributesSlot, sizesSlot } = this.layout;
    if (this.attrMask !== 0) this.set(attributesSlot, attributes.build(this.attrMask));
    // Size runs keep the order written (S, M, L), not template order.
    if (this.sizes !== undefined)
      this.set(sizesSlot, this.sizeShapes.build(this.sizeNames, this.sizeCount, this.sizes));
    return item.build(this.mask);
  }
}

const MAX_SIZE_SHAPES = 4096;

interface SizeShape {
  next: Map<string, SizeShape> | undefined;
  build: Build | undefined;
}

/**
 * A compact literal per run of size names (S, M, L as written), found by walking the names
 * one by one: no key list, joined signature or values array per item, as a general
 * compactor would make (a Stock line per row of a big file). An object's key order is the
 * language's either way (integer-like names first), so the order the names came in only
 * picks the builder. Bounded: past MAX_SIZE_SHAPES runs (a hostile file), the item keeps the
 * object the sizes were added to, which holds the same sizes, only less compactly.
 */
class SizeShapes {
  private readonly root: SizeShape = { next: undefined, build: undefined };
  private readonly values: unknown[] = [];
  private shapes = 0;

  /** The compact object of `sizes`, whose names are names[0, count) in the order added. */
  build(names: readonly string[], count: number, sizes: Record<string, unknown>): Obj {
    if (this.shapes >= MAX_SIZE_SHAPES) return sizes;
    let shape = this.root;
    const values = this.values;
    for (let k = 0; k < count; k++) {
      const name = names[k];
      shape.next ??= new Map();
      let next = shape.next.get(name);
      if (next === undefined) {
        next = { next: undefined, build: undefined };
        shape.next.set(name, next);
        this.shapes++;
      }
      shape = next;
      values[k] = sizes[name];
    }
    shape.build ??= literalBuilder(
      names.slice(0, count),
      Array.from({ length: count }, (_, k) => k),
    );
    return shape.build(values);
  }
}
