import { isAlias, isMap, isScalar, isSeq, type Alias, type Document, type LineCounter, type Node } from 'yaml';
import { parsePath } from '../field-path.js';
import { anchorResolver } from './anchors.js';
import type { SourceLocation, SourceMap } from '../model.js';

/**
 * Locates field paths in a parsed YAML/JSON document on demand: walks the AST along the
 * path and turns the node's offset into line:column. Nothing is precomputed, so a big
 * manifest costs nothing until an error needs a location.
 */
export class YamlSourceMap implements SourceMap {
  /** Built on the first path through an alias: a manifest without aliases never pays for it. */
  private resolveAlias: ((alias: Alias) => Node | undefined) | undefined;

  constructor(
    private readonly file: string,
    private readonly doc: Document.Parsed | undefined,
    private readonly lineCounter: LineCounter,
  ) {}

  /** The value at `path` (or its nearest existing ancestor). Collections point at their key. */
  locate(path: string): SourceLocation {
    const found = this.walk(path);
    if (!found) return { file: this.file };
    const { node, key, complete } = found;
    // A scalar value is what is wrong; a missing child or a collection is best shown by its key.
    const target = complete && isScalar(node) ? node : (key ?? node);
    return this.at(target);
  }

  /** The key of the entry at `path` (unknown or duplicate keys), else as locate. */
  locateKey(path: string): SourceLocation {
    const found = this.walk(path);
    if (found?.complete && found.key) return this.at(found.key);
    return this.locate(path);
  }

  /** Location of a byte offset in the source (1-based line and column). */
  at(node: Node | number | undefined): SourceLocation {
    const offset = typeof node === 'number' ? node : node?.range?.[0];
    if (offset === undefined) return { file: this.file };
    const { line, col } = this.lineCounter.linePos(offset);
    return { file: this.file, line, column: col };
  }

  private resolved(alias: Alias): Node | undefined {
    if (!this.doc) return undefined;
    this.resolveAlias ??= anchorResolver(this.doc);
    return this.resolveAlias(alias);
  }

  private walk(path: string): { node: Node; key?: Node; complete: boolean } | undefined {
    const contents = this.doc?.contents as Node | null | undefined;
    if (!contents) return undefined;
    let node: Node = contents;
    let key: Node | undefined;
    for (const seg of parsePath(path)) {
      const resolved = isAlias(node) ? (this.resolved(node) ?? node) : node;
      let next: { node: Node; key?: Node } | undefined;
      if (typeof seg === 'number' && isSeq(resolved)) {
        const item = resolved.items[seg] as Node | undefined;
        if (item) next = { node: item };
      } else if (isMap(resolved)) {
        for (const pair of resolved.items) {
          const k = pair.key as Node | null;
          const name = isScalar(k) ? String(k.source ?? k.value) : undefined;
          if (name === String(seg)) {
            // `key:` with no value has a null value node; point at the key then.
            next = { node: (pair.value as Node | null) ?? (k as Node), key: k ?? undefined };
            break;
          }
        }
      }
      if (!next) return { node, key, complete: false };
      node = next.node;
      key = next.key;
    }
    return { node, key, complete: true };
  }
}
