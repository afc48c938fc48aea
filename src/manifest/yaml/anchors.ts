import { visit, type Alias, type Document, type Node } from 'yaml';

/**
 * Alias → anchored node, from one walk of the document that indexes every anchor. yaml's own
 * `Alias.resolve` walks the whole document per call, which makes every alias expanded, and every
 * diagnostic located through an alias, cost the whole document. An alias refers to the last
 * anchor of that name defined before it.
 */
export function anchorResolver(doc: Document.Parsed): (alias: Alias) => Node | undefined {
  // Each name's anchors in document order (visit's), so the one before an alias is a binary search.
  const anchors = new Map<string, { offset: number; node: Node }[]>();
  visit(doc, (_key, node) => {
    const n = node as Node & { anchor?: string };
    if (n && typeof n === 'object' && 'anchor' in n && n.anchor && n.range) {
      const list = anchors.get(n.anchor) ?? [];
      list.push({ offset: n.range[0], node: n });
      anchors.set(n.anchor, list);
    }
  });
  return (alias) => {
    const list = anchors.get(alias.source) ?? [];
    const at = alias.range?.[0] ?? Number.POSITIVE_INFINITY;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].offset < at) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? list[lo - 1].node : undefined;
  };
}
