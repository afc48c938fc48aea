import { isAlias, isMap, isPair, isScalar, isSeq, type Alias, type Document, type Node, type YAMLMap } from 'yaml';
import { childSchema, wantsString, type SchemaNode } from '../schema/manifest-schema.js';
import { formatPath, type PathSegment } from '../field-path.js';
import type { Diagnostic } from '../model.js';
import { anchorResolver } from './anchors.js';
import type { YamlSourceMap } from './yaml-source-map.js';

/**
 * Turns a parsed YAML/JSON AST into plain data, guided by the manifest schema:
 * - where the schema wants text, a plain scalar is taken AS WRITTEN (`postalCode: 01234` →
 *   "01234", `Colors: 4` → "4", `dateDue: 2026-12-04` → "2026-12-04"), because YAML 1.2
 *   would otherwise turn it into a number and lose the zero;
 * - duplicate keys are reported with both locations (the first value is kept);
 * - alias expansion is budgeted, so an alias bomb ("billion laughs") fails in milliseconds.
 */

export interface AliasLimits {
  /** Most alias references expanded in one document. Default 10,000. */
  maxAliasCount?: number;
  /** Most nodes produced by expanding aliases, in total. Default 100,000. */
  maxAliasNodes?: number;
}

export interface ConvertResult {
  value: unknown;
  diagnostics: Diagnostic[];
  /** True when expansion was stopped (alias bomb): the value must not be used. */
  aborted: boolean;
}

class AliasBudgetExceeded extends Error {}

export function astToValue(
  doc: Document.Parsed,
  sources: YamlSourceMap,
  rootSchema: SchemaNode,
  limits: AliasLimits = {},
): ConvertResult {
  const converter = new Converter(doc, sources, limits.maxAliasCount ?? 10_000, limits.maxAliasNodes ?? 100_000);
  try {
    const value = converter.convert(doc.contents as Node | null, rootSchema, undefined);
    return { value, diagnostics: converter.diagnostics, aborted: false };
  } catch (err) {
    if (!(err instanceof AliasBudgetExceeded)) throw err;
    const message =
      `aliases expand too far (over ${converter.maxAliasCount} alias references or ${converter.maxAliasNodes} expanded nodes); ` +
      'this looks like an alias bomb. Use `defaults:` for shared values instead';
    const source = sources.at(converter.abortAt ?? 0);
    converter.diagnostics.push({ severity: 'error', code: 'yaml.alias-limit', message, source });
    return { value: undefined, diagnostics: converter.diagnostics, aborted: true };
  }
}

/** One conversion's state: the diagnostics found, and the alias budget spent so far. */
class Converter {
  readonly diagnostics: Diagnostic[] = [];
  /** The outermost alias being expanded when the budget ran out: the reference the user wrote. */
  abortAt: Node | undefined;
  private aliasCount = 0;
  private aliasNodes = 0;
  private aliasDepth = 0;
  private readonly expanding = new Set<Node>();
  private readonly resolveAlias: (alias: Alias) => Node | undefined;

  constructor(
    doc: Document.Parsed,
    private readonly sources: YamlSourceMap,
    readonly maxAliasCount: number,
    readonly maxAliasNodes: number,
  ) {
    this.resolveAlias = anchorResolver(doc);
  }

  convert(node: Node | null | undefined, schema: SchemaNode | undefined, path: PathLink): unknown {
    if (node === null || node === undefined) return null;
    if (this.aliasDepth > 0 && ++this.aliasNodes > this.maxAliasNodes) throw new AliasBudgetExceeded();
    if (isAlias(node)) return this.alias(node, schema, path);
    if (isScalar(node)) {
      const value = node.value;
      // Only plain scalars are re-read: quoted and block scalars are already text.
      if (value !== null && typeof value !== 'string' && wantsString(schema) && node.type === 'PLAIN') {
        return node.source ?? String(value);
      }
      return value;
    }
    if (isSeq(node)) {
      const itemSchema = childSchema(schema, 0);
      return node.items.map((item, i) => this.convert(item as Node, itemSchema, { up: path, seg: i }));
    }
    if (isMap(node)) return this.map(node as YAMLMap, schema, path);
    return null;
  }

  private alias(node: Alias, schema: SchemaNode | undefined, path: PathLink): unknown {
    if (this.aliasDepth === 0) this.abortAt = node;
    if (++this.aliasCount > this.maxAliasCount) throw new AliasBudgetExceeded();
    const target = this.resolveAlias(node);
    if (!target) {
      this.diagnostics.push(error('yaml.unknown-alias', `unknown alias *${node.source}`, path, this.sources.at(node)));
      return null;
    }
    if (this.expanding.has(target)) {
      const message = `alias *${node.source} refers to itself`;
      this.diagnostics.push(error('yaml.recursive-alias', message, path, this.sources.at(node)));
      return null;
    }
    this.expanding.add(target);
    this.aliasDepth++;
    try {
      return this.convert(target, schema, path);
    } finally {
      this.aliasDepth--;
      this.expanding.delete(target);
    }
  }

  private map(node: YAMLMap, schema: SchemaNode | undefined, path: PathLink): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const firstKeys = new Map<string, Node>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const keyNode = pair.key as Node | null;
      if (!isScalar(keyNode)) {
        this.diagnostics.push(
          error('yaml.complex-key', 'keys must be plain text', path, this.sources.at(keyNode ?? node)),
        );
        continue;
      }
      const key = String(keyNode.source ?? keyNode.value ?? '');
      const first = firstKeys.get(key);
      if (first) {
        const was = this.sources.at(first);
        const message = `duplicate key "${key}" (first at line ${was.line}, column ${was.column})`;
        this.diagnostics.push(error('yaml.duplicate-key', message, { up: path, seg: key }, this.sources.at(keyNode)));
        continue;
      }
      firstKeys.set(key, keyNode);
      const value = this.convert(pair.value as Node | null, childSchema(schema, key), { up: path, seg: key });
      // A key named `__proto__` must stay data, never become the object's prototype.
      if (key === '__proto__')
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }
}

/** The path to a node as a parent-linked list: built per node for free, turned into text only for a diagnostic. */
type PathLink = { up: PathLink; seg: PathSegment } | undefined;

function segmentsOf(path: PathLink): PathSegment[] {
  const out: PathSegment[] = [];
  for (let p = path; p; p = p.up) out.push(p.seg);
  return out.reverse();
}

function error(code: string, message: string, path: PathLink, source: Diagnostic['source']): Diagnostic {
  const field = formatPath(segmentsOf(path));
  return { severity: 'error', code, message, field: field || undefined, source };
}
