import { parsePath } from '../field-path.js';
import type { Diagnostic, RawDocument, SourceLocation, SourceMap } from '../model.js';
import { childSchema, wantsString, type SchemaNode } from '../schema/manifest-schema.js';

/**
 * A fast reader for the YAML most manifests are written in — block maps and sequences, one-line
 * plain or quoted scalars, one-line flow maps and sequences (`{ itemType: Asset, code: A1 }`),
 * comments — giving the same data and the same source locations as the `yaml` package, about
 * ten times faster: the package's parse was most of a big `run`'s start (issue 16). Anything
 * else (anchors, aliases, tags, block or multi-line scalars, escapes, empty values, duplicate
 * or quoted keys, keys over 1,024 characters, tabs, CR, white space other than the space,
 * directives, documents markers, and everything that is not valid) makes it give up, and
 * the manifest is read by the `yaml` package as before, which also words every error. Plain scalars are resolved as the package's YAML 1.2 core schema does, so
 * `0o17`, `1e3`, `.inf`, `~` or `2026-12-04` mean what they always meant.
 * test/manifest/fast-yaml.test.ts compares both readers on the samples and on random manifests.
 */

interface Scalar {
  kind: 'scalar';
  /** Offset of the first character (the quote of a quoted scalar). */
  at: number;
  plain: boolean;
  /** The text as written for a plain scalar; the string itself for a quoted one. */
  source: string;
  /** Keys: their text (astToValue names an entry by its key's source, never its value). */
  value: unknown;
}
interface MapNode {
  kind: 'map';
  /** A block map: its first key; a flow map: its `{`. */
  at: number;
  keys: Scalar[];
  values: Node[];
}
interface SeqNode {
  kind: 'seq';
  /** A block sequence: its first `-`; a flow sequence: its `[`. */
  at: number;
  items: Node[];
}
type Node = Scalar | MapNode | SeqNode;

/** Thrown inside the reader: the text is outside what it reads; the `yaml` package reads it instead. */
class GiveUp extends Error {}
const giveUp = (): never => {
  throw new GiveUp();
};

interface Line {
  /** Offset of the line's first character and of its first non-space character. */
  start: number;
  content: number;
  end: number;
  indent: number;
}

/**
 * The `yaml` package's YAML 1.2 core schema for plain scalars (yaml 2.x, src/schema/core), in
 * its order: the first test that matches decides. Copied rather than imported so that a
 * manifest in the fast subset never loads the package (~25 ms of every start);
 * test/manifest/fast-yaml.test.ts holds both to the same values.
 */
const CORE_SCALARS: readonly (readonly [RegExp, (source: string) => unknown])[] = [
  [/^(?:~|[Nn]ull|NULL)?$/, () => null],
  [/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === 't' || s[0] === 'T'],
  [/^0o[0-7]+$/, (s) => Number.parseInt(s.substring(2), 8)],
  [/^[-+]?[0-9]+$/, (s) => Number.parseInt(s, 10)],
  [/^0x[0-9a-fA-F]+$/, (s) => Number.parseInt(s.substring(2), 16)],
  [
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    (s) => (s.slice(-3).toLowerCase() === 'nan' ? Number.NaN : s[0] === '-' ? -Infinity : Infinity),
  ],
  [/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, Number.parseFloat],
  [/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, Number.parseFloat],
];

/** What the text of any scalar CORE_SCALARS resolves to something other than a string starts with. */
const CORE_FIRST = /^[~nNtTfF0-9+\-.]/;

/** Returns undefined when the text is not in the subset (the caller parses it with the `yaml` package). */
export function parseFastYaml(
  file: string,
  text: string,
  rootSchema: SchemaNode,
): Pick<RawDocument, 'doc' | 'sources' | 'diagnostics'> | undefined {
  // Tabs, CR line ends, a byte-order mark and other documents are left to the package; so is
  // every other character JavaScript counts as white space (NBSP, U+2028, U+3000, \v, \f ...):
  // YAML's is only the space and the tab, and the `trimEnd()`s below would drop them from a
  // scalar's end (`code: A1<NBSP>` read as "A1" where the package reads "A1<NBSP>").
  if (/[^\S \n]|^(?:---|\.\.\.|%)/m.test(text)) return undefined;
  try {
    const reader = new Reader(text);
    const root = reader.document();
    if (!root) return undefined;
    const doc = toValue(root, rootSchema);
    const sources = new FastSourceMap(file, root, text);
    const diagnostics: Diagnostic[] = [];
    return { doc, sources, diagnostics };
  } catch (err) {
    if (err instanceof GiveUp) return undefined;
    throw err;
  }
}

/** Where the `yaml` package could read a plain scalar differently, or not at all. */
const PLAIN_START = /^[^-?:,[\]{}#&*!|>'"%@`\s]|^[-?:][^\s,[\]{}]/;

/** Deeper nesting is left to the package (the reader recurses; no manifest nests this deep). */
const MAX_DEPTH = 64;

class Reader {
  private readonly lines: Line[] = [];
  private i = 0;
  private depth = 0;

  /** Runs one level deeper, giving up past MAX_DEPTH. */
  private nested<T>(read: () => T): T {
    if (++this.depth > MAX_DEPTH) giveUp();
    try {
      return read();
    } finally {
      this.depth--;
    }
  }

  constructor(private readonly text: string) {
    let start = 0;
    while (start <= text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      let content = start;
      while (content < end && text.charCodeAt(content) === 32) content++;
      // Blank and comment-only lines carry nothing.
      if (content < end && text.charCodeAt(content) !== 35) {
        this.lines.push({ start, content, end, indent: content - start });
      }
      start = end + 1;
    }
  }

  document(): Node | undefined {
    if (this.lines.length === 0) return undefined;
    const first = this.lines[0] as Line;
    if (first.indent !== 0) giveUp();
    const root = this.block(0);
    if (this.i < this.lines.length) giveUp();
    return root;
  }

  /** The block node whose first line is the current one, at `indent`. */
  private block(indent: number): Node {
    const line = this.lines[this.i] as Line;
    if (this.isItem(line.content, line.end)) return this.nested(() => this.seq(indent));
    if (this.entryColon(line.content, line.end) >= 0) return this.nested(() => this.map(indent, line.content));
    // A lone scalar or flow collection as a whole block (a root that is not a map): rare; left.
    return giveUp();
  }

  private isItem(from: number, end: number): boolean {
    const t = this.text;
    return t.charCodeAt(from) === 45 && (from + 1 === end || t.charCodeAt(from + 1) === 32);
  }

  /**
   * The colon of a `key: value` entry starting at `from`, or -1 when the text is no entry.
   * Keys are plain, on one line, without `#`; a quoted key or a flow collection gives up.
   */
  private entryColon(from: number, end: number): number {
    const t = this.text;
    const c = t.charCodeAt(from);
    // A quoted or flow start: a scalar (or a quoted key, which is left to the package).
    if (c === 39 || c === 34 || c === 123 || c === 91) return -1;
    for (let k = from; k < end; k++) {
      const ch = t.charCodeAt(k);
      if (ch === 58 && (k + 1 === end || t.charCodeAt(k + 1) === 32)) return k;
      if (ch === 35 && t.charCodeAt(k - 1) === 32) return -1; // a comment before any colon
    }
    return -1;
  }

  private map(indent: number, firstFrom: number): MapNode {
    const node: MapNode = { kind: 'map', at: firstFrom, keys: [], values: [] };
    let from = firstFrom;
    for (;;) {
      const line = this.lines[this.i] as Line;
      const colon = this.entryColon(from, line.end);
      if (colon < 0) giveUp();
      const keyText = this.text.slice(from, colon).trimEnd();
      // The package's limit is on the colon's distance from the key, spaces before it included.
      if (keyText === '' || colon - from > 1024 || !PLAIN_START.test(keyText) || /[#'"]|: /.test(keyText)) giveUp();
      node.keys.push({ kind: 'scalar', at: from, plain: true, source: keyText, value: keyText });
      const rest = skipSpaces(this.text, colon + 1, line.end);
      if (rest === line.end || this.text.charCodeAt(rest) === 35) {
        if (rest < line.end && this.text.charCodeAt(rest - 1) !== 32) giveUp();
        // `key:` and the value on the next lines: a deeper block, or a sequence at the key's indent.
        this.i++;
        const next = this.lines[this.i];
        if (next && next.indent > indent) node.values.push(this.block(next.indent));
        else if (next && next.indent === indent && this.isItem(next.content, next.end))
          node.values.push(this.nested(() => this.seq(indent)));
        else giveUp(); // an empty value (null): left to the package
      } else {
        node.values.push(this.inline(rest, line.end));
        this.i++;
        const next = this.lines[this.i];
        if (next && next.indent > indent) giveUp(); // a multi-line scalar
      }
      const next = this.lines[this.i];
      if (!next || next.indent < indent) return node;
      if (next.indent > indent || this.isItem(next.content, next.end)) giveUp();
      from = next.content;
    }
  }

  private seq(indent: number): SeqNode {
    const first = this.lines[this.i] as Line;
    const node: SeqNode = { kind: 'seq', at: first.content, items: [] };
    for (;;) {
      const line = this.lines[this.i] as Line;
      const from = skipSpaces(this.text, line.content + 1, line.end);
      if (from === line.end || this.text.charCodeAt(from) === 35) {
        if (from < line.end && this.text.charCodeAt(from - 1) !== 32) giveUp();
        this.i++;
        const next = this.lines[this.i];
        if (!next || next.indent <= indent) giveUp(); // an empty item (null)
        node.items.push(this.block(next.indent));
      } else if (this.isItem(from, line.end)) {
        giveUp(); // `- - x`
      } else if (this.entryColon(from, line.end) >= 0) {
        // `- key: value`: a map whose indent is its first key's column.
        node.items.push(this.nested(() => this.map(from - line.start, from)));
      } else {
        node.items.push(this.inline(from, line.end));
        this.i++;
        const next = this.lines[this.i];
        if (next && next.indent > indent) giveUp();
      }
      const next = this.lines[this.i];
      if (!next || next.indent < indent) return node;
      if (next.indent > indent || !this.isItem(next.content, next.end)) {
        // The next entry of a map whose value this sequence is (`key:` then `- …` at the key's indent).
        if (next.indent === indent && this.entryColon(next.content, next.end) >= 0) return node;
        giveUp();
      }
    }
  }

  /** A value on the rest of one line: a scalar or a one-line flow collection, then at most a comment. */
  private inline(from: number, end: number): Node {
    const t = this.text;
    const c = t.charCodeAt(from);
    let node: Node;
    let after: number;
    if (c === 123 || c === 91 || c === 39 || c === 34) {
      [node, after] = this.flowValue(from, end);
      after = skipSpaces(t, after, end);
      if (after < end && !(t.charCodeAt(after) === 35 && t.charCodeAt(after - 1) === 32)) giveUp();
    } else {
      // A comment starts at ` #` (searched on this line only: the text after may be long).
      let stop = from;
      while (stop < end && !(t.charCodeAt(stop) === 35 && t.charCodeAt(stop - 1) === 32)) stop++;
      const source = t.slice(from, stop).trimEnd();
      if (!PLAIN_START.test(source) || source.includes(': ') || source.endsWith(':')) giveUp();
      node = { kind: 'scalar', at: from, plain: true, source, value: resolvePlain(source) };
    }
    return node;
  }

  /** A flow collection or a quoted scalar at `from`; returns it and the offset after it. */
  private flowValue(from: number, end: number): [Node, number] {
    const t = this.text;
    const c = t.charCodeAt(from);
    if (c === 39) {
      let k = from + 1;
      for (;;) {
        k = t.indexOf("'", k);
        if (k < 0 || k >= end) giveUp();
        if (t.charCodeAt(k + 1) === 39) k += 2;
        else break;
      }
      const value = t.slice(from + 1, k).replaceAll("''", "'");
      return [{ kind: 'scalar', at: from, plain: false, source: value, value }, k + 1];
    }
    if (c === 34) {
      const k = t.indexOf('"', from + 1);
      if (k < 0 || k >= end) giveUp();
      const value = t.slice(from + 1, k);
      if (value.includes('\\')) giveUp();
      return [{ kind: 'scalar', at: from, plain: false, source: value, value }, k + 1];
    }
    if (c === 123) {
      const node: MapNode = { kind: 'map', at: from, keys: [], values: [] };
      let k = skipSpaces(t, from + 1, end);
      if (t.charCodeAt(k) === 125) return [node, k + 1];
      for (;;) {
        const keyEnd = t.indexOf(': ', k);
        if (keyEnd < 0 || keyEnd >= end) giveUp();
        const keyText = t.slice(k, keyEnd).trimEnd();
        if (keyText === '' || !PLAIN_START.test(keyText) || /[,[\]{}#'"]|: /.test(keyText)) giveUp();
        node.keys.push({ kind: 'scalar', at: k, plain: true, source: keyText, value: keyText });
        const [value, after] = this.flowItem(skipSpaces(t, keyEnd + 1, end), end);
        node.values.push(value);
        k = skipSpaces(t, after, end);
        const sep = t.charCodeAt(k);
        if (sep === 125) return [node, k + 1];
        if (sep !== 44) giveUp();
        k = skipSpaces(t, k + 1, end);
        if (t.charCodeAt(k) === 125) giveUp(); // a trailing comma
      }
    }
    if (c === 91) {
      const node: SeqNode = { kind: 'seq', at: from, items: [] };
      let k = skipSpaces(t, from + 1, end);
      if (t.charCodeAt(k) === 93) return [node, k + 1];
      for (;;) {
        const [value, after] = this.flowItem(k, end);
        node.items.push(value);
        k = skipSpaces(t, after, end);
        const sep = t.charCodeAt(k);
        if (sep === 93) return [node, k + 1];
        if (sep !== 44) giveUp();
        k = skipSpaces(t, k + 1, end);
        if (t.charCodeAt(k) === 93) giveUp();
      }
    }
    return giveUp();
  }

  /** A value inside a flow collection: nested, quoted, or plain up to `,`, `}` or `]`. */
  private flowItem(from: number, end: number): [Node, number] {
    const t = this.text;
    const c = t.charCodeAt(from);
    if (c === 123 || c === 91 || c === 39 || c === 34) return this.nested(() => this.flowValue(from, end));
    let k = from;
    while (k < end) {
      const ch = t.charCodeAt(k);
      if (ch === 44 || ch === 125 || ch === 93) break;
      k++;
    }
    const source = t.slice(from, k).trimEnd();
    if (source === '' || !PLAIN_START.test(source) || /[[\]{}#'"]|:(?: |$)/.test(source)) giveUp();
    return [{ kind: 'scalar', at: from, plain: true, source, value: resolvePlain(source) }, k];
  }
}

function skipSpaces(text: string, from: number, end: number): number {
  let k = from;
  while (k < end && text.charCodeAt(k) === 32) k++;
  return k;
}

/** A plain scalar's value, as the `yaml` package's core schema resolves it. */
function resolvePlain(source: string): unknown {
  // Every pattern of CORE_SCALARS needs one of these first characters (or an empty text):
  // most scalars of a manifest (codes, names, streets) are strings, told as such without
  // running eight regular expressions on each.
  if (source !== '' && !CORE_FIRST.test(source)) return source;
  for (const [test, resolve] of CORE_SCALARS) if (test.test(source)) return resolve(source);
  return source;
}

/** Plain data as astToValue makes it from the package's AST (schema-guided text, `__proto__` kept as data). */
function toValue(node: Node, schema: SchemaNode | undefined): unknown {
  if (node.kind === 'scalar') {
    const { value } = node;
    if (value !== null && typeof value !== 'string' && wantsString(schema) && node.plain) return node.source;
    return value;
  }
  if (node.kind === 'seq') {
    const itemSchema = childSchema(schema, 0);
    return node.items.map((item) => toValue(item, itemSchema));
  }
  const out: Record<string, unknown> = {};
  node.keys.forEach((keyNode, k) => {
    const key = keyNode.source;
    // A duplicate key is an error worded (with both locations) by the full reader. Every key
    // read so far is an own property of `out` (`__proto__` too: defined, not assigned), so
    // asking it needs no set of seen keys per map (thousands of maps in a big manifest).
    if (Object.hasOwn(out, key)) giveUp();
    const value = toValue(node.values[k] as Node, childSchema(schema, key));
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  });
  return out;
}

/** YamlSourceMap's answers (locate, locateKey, at) over the fast reader's nodes. */
class FastSourceMap implements SourceMap {
  private lineStarts: number[] | undefined;

  constructor(
    private readonly file: string,
    private readonly root: Node,
    private readonly text: string,
  ) {}

  locate(path: string): SourceLocation {
    const found = this.walk(path);
    if (!found) return { file: this.file };
    const { node, key, complete } = found;
    const target = complete && node.kind === 'scalar' ? node : (key ?? node);
    return this.at(target.at);
  }

  locateKey(path: string): SourceLocation {
    const found = this.walk(path);
    if (found?.complete && found.key) return this.at(found.key.at);
    return this.locate(path);
  }

  at(offset: number): SourceLocation {
    this.lineStarts ??= lineStartsOf(this.text);
    const starts = this.lineStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { file: this.file, line: lo + 1, column: offset - (starts[lo] as number) + 1 };
  }

  private walk(path: string): { node: Node; key?: Scalar; complete: boolean } | undefined {
    let node: Node = this.root;
    let key: Scalar | undefined;
    for (const seg of parsePath(path)) {
      let next: { node: Node; key?: Scalar } | undefined;
      if (typeof seg === 'number' && node.kind === 'seq') {
        const item = node.items[seg];
        if (item) next = { node: item };
      } else if (node.kind === 'map') {
        const k = node.keys.findIndex((candidate) => candidate.source === String(seg));
        if (k >= 0) next = { node: node.values[k] as Node, key: node.keys[k] };
      }
      if (!next) return { node, key, complete: false };
      node = next.node;
      key = next.key;
    }
    return { node, key, complete: true };
  }
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let k = text.indexOf('\n'); k >= 0; k = text.indexOf('\n', k + 1)) starts.push(k + 1);
  return starts;
}
