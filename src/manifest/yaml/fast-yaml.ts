import { parsePath } from '../field-path.js';
import type { Diagnostic, RawDocument, SourceLocation, SourceMap } from '../model.js';
import { childSchema, wantsString, type SchemaNode } from '../schema/manifest-schema.js';

/**
 * A fast reader for the YAML most manifests are written in — block maps and sequences, one-line
 * plain or quoted scalars, one-line flow maps and sequences (`{ itemType: Asset, code: A1 }`),
 * comments — giving the same data and the same source locations as the `yaml` package. Speed
 * (`npm run bench`, run against a bare client): the package's parse of a big manifest is most of
 * a run's start, before the first order can be sent. Anything else (anchors, aliases, tags, block
 * or multi-line scalars, escapes, empty values, duplicate or quoted keys, keys over 1,024
 * characters, tabs, CR, white space other than the space, directives, document markers, and
 * everything that is not valid) makes it give up, and the `yaml` package reads the manifest,
 * wording every error. Plain scalars are resolved as the package's YAML 1.2 core schema does,
 * so `0o17`, `1e3`, `.inf`, `~` or `2026-12-04` mean what they always meant.
 * test/manifest/fast-yaml.test.ts holds both readers to the same answers, on the samples and
 * on random manifests.
 */

/**
 * The node table: one row per node (scalar, map or sequence) in parallel typed arrays, not an
 * object per node: every node is kept by the source map, and typed arrays live outside the heap
 * the young-generation collector copies. A map's keys are not stored: a key is its text,
 * `keyAt` to `keyEnd`.
 */
const SCALAR = 0;
const MAP = 1;
const SEQ = 2;

class Nodes {
  count = 0;
  kind: Uint8Array;
  /** Offset of a scalar's first character (the quote of a quoted one); a block map's first key, a flow map's `{`; a block sequence's first `-`, a flow sequence's `[`. */
  at: Int32Array;
  /** The node's key in its map: offsets of its first character and after its last; -1 outside a map. */
  keyAt: Int32Array;
  keyEnd: Int32Array;
  /** A map's or sequence's children, in order: `kids[kidStart]`, and `kidCount` of them. */
  kidStart: Int32Array;
  kidCount: Int32Array;
  kids: Int32Array;
  private kidsLength = 0;
  /** The children of the collections being read, innermost last; moved to `kids` when one ends. */
  private pending: Int32Array;
  private pendingLength = 0;

  constructor(capacity: number) {
    this.kind = new Uint8Array(capacity);
    this.at = new Int32Array(capacity);
    this.keyAt = new Int32Array(capacity);
    this.keyEnd = new Int32Array(capacity);
    this.kidStart = new Int32Array(capacity);
    this.kidCount = new Int32Array(capacity);
    this.kids = new Int32Array(capacity);
    this.pending = new Int32Array(64);
  }

  add(kind: number, at: number): number {
    const id = this.count++;
    if (id === this.at.length) {
      const size = id * 2;
      this.kind = grown(this.kind, new Uint8Array(size));
      this.at = grown(this.at, new Int32Array(size));
      this.keyAt = grown(this.keyAt, new Int32Array(size));
      this.keyEnd = grown(this.keyEnd, new Int32Array(size));
      this.kidStart = grown(this.kidStart, new Int32Array(size));
      this.kidCount = grown(this.kidCount, new Int32Array(size));
    }
    this.kind[id] = kind;
    this.at[id] = at;
    this.keyAt[id] = -1;
    return id;
  }

  /** Where the children of a collection about to be read start (pass it to `close`). */
  open(): number {
    return this.pendingLength;
  }

  /** `id` is the next child of the collection being read; `keyAt`/`keyEnd` its key's, or -1 in a sequence. */
  child(id: number, keyAt: number, keyEnd: number): void {
    this.keyAt[id] = keyAt;
    this.keyEnd[id] = keyEnd;
    if (this.pendingLength === this.pending.length)
      this.pending = grown(this.pending, new Int32Array(this.pending.length * 2));
    this.pending[this.pendingLength++] = id;
  }

  /** The collection `id`, whose children were given since `open` returned `base`, is read. */
  close(id: number, base: number): void {
    const n = this.pendingLength - base;
    if (this.kidsLength + n > this.kids.length)
      this.kids = grown(this.kids, new Int32Array(Math.max(this.kids.length * 2, this.kidsLength + n)));
    this.kidStart[id] = this.kidsLength;
    this.kidCount[id] = n;
    for (let k = base; k < this.pendingLength; k++) this.kids[this.kidsLength++] = this.pending[k] as number;
    this.pendingLength = base;
  }
}

function grown<T extends Uint8Array | Int32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** Thrown inside the reader: the text is outside what it reads; the `yaml` package reads it instead. */
class GiveUp extends Error {}
const giveUp = (): never => {
  throw new GiveUp();
};

/**
 * The `yaml` package's YAML 1.2 core schema for plain scalars (yaml 2.x, src/schema/core), in
 * its order: the first test that matches decides. Copied rather than imported so that a
 * manifest in the fast subset never loads the package;
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
    const doc = reader.document(rootSchema);
    const sources = new FastSourceMap(file, reader.nodes, reader.root, text);
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

/**
 * Reads the text into plain data as astToValue makes it from the package's AST (schema-guided
 * text, `__proto__` kept as data), and the node table for the source map, in one pass: no tree
 * of objects in between. Each read returns the value; the node it made is left in `last` and,
 * for flow values, the offset after it in `pos` (no tuple per value).
 */
class Reader {
  /** The lines that carry something (not blank, not only a comment): offsets of their first character, first non-space character and end. */
  private readonly lineStart: Int32Array;
  private readonly lineContent: Int32Array;
  private readonly lineEnd: Int32Array;
  private readonly lineCount: number;
  private i = 0;
  private depth = 0;
  /** The node of the value read last. */
  private last = 0;
  /** The offset after the flow value or item read last. */
  private pos = 0;
  readonly nodes: Nodes;
  root = 0;

  constructor(private readonly text: string) {
    let lines = 1;
    for (let k = text.indexOf('\n'); k >= 0; k = text.indexOf('\n', k + 1)) lines++;
    this.lineStart = new Int32Array(lines);
    this.lineContent = new Int32Array(lines);
    this.lineEnd = new Int32Array(lines);
    let count = 0;
    let start = 0;
    while (start <= text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      let content = start;
      while (content < end && text.charCodeAt(content) === 32) content++;
      // Blank and comment-only lines carry nothing.
      if (content < end && text.charCodeAt(content) !== 35) {
        this.lineStart[count] = start;
        this.lineContent[count] = content;
        this.lineEnd[count] = end;
        count++;
      }
      start = end + 1;
    }
    this.lineCount = count;
    // Room for a node per 8 bytes, about twice what a typical manifest has, before the table grows.
    this.nodes = new Nodes(64 + (text.length >> 3));
  }

  /** The whole text's value (its node is `root`). */
  document(schema: SchemaNode): unknown {
    if (this.lineCount === 0 || this.indent(0) !== 0) giveUp();
    const value = this.block(0, schema);
    if (this.i < this.lineCount) giveUp();
    this.root = this.last;
    return value;
  }

  private indent(line: number): number {
    return (this.lineContent[line] as number) - (this.lineStart[line] as number);
  }

  /** One level deeper, giving up past MAX_DEPTH (a give-up ends the whole read: no need to step back on it). */
  private deeper(): void {
    if (++this.depth > MAX_DEPTH) giveUp();
  }

  /** The block node whose first line is the current one, at `indent`. */
  private block(indent: number, schema: SchemaNode | undefined): unknown {
    const from = this.lineContent[this.i] as number;
    const end = this.lineEnd[this.i] as number;
    let value: unknown;
    this.deeper();
    if (this.isItem(from, end)) value = this.seq(indent, schema);
    else if (this.entryColon(from, end) >= 0) value = this.map(indent, from, schema);
    // A lone scalar or flow collection as a whole block (a root that is not a map): rare; left.
    else giveUp();
    this.depth--;
    return value;
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

  private map(indent: number, firstFrom: number, schema: SchemaNode | undefined): Record<string, unknown> {
    const t = this.text;
    const nodes = this.nodes;
    const id = nodes.add(MAP, firstFrom);
    const base = nodes.open();
    const out: Record<string, unknown> = {};
    let from = firstFrom;
    for (;;) {
      const end = this.lineEnd[this.i] as number;
      const colon = this.entryColon(from, end);
      if (colon < 0) giveUp();
      const key = t.slice(from, colon).trimEnd();
      // The package's limit is on the colon's distance from the key, spaces before it included.
      if (key === '' || colon - from > 1024 || !PLAIN_START.test(key) || /[#'"]|: /.test(key)) giveUp();
      const valueSchema = checkedChildSchema(out, key, schema);
      let value: unknown;
      const rest = skipSpaces(t, colon + 1, end);
      if (rest === end || t.charCodeAt(rest) === 35) {
        if (rest < end && t.charCodeAt(rest - 1) !== 32) giveUp();
        // `key:` and the value on the next lines: a deeper block, or a sequence at the key's indent.
        const next = ++this.i;
        if (next < this.lineCount && this.indent(next) > indent) value = this.block(this.indent(next), valueSchema);
        else if (
          next < this.lineCount &&
          this.indent(next) === indent &&
          this.isItem(this.lineContent[next] as number, this.lineEnd[next] as number)
        ) {
          this.deeper();
          value = this.seq(indent, valueSchema);
          this.depth--;
        } else giveUp(); // an empty value (null): left to the package
      } else {
        value = this.inline(rest, end, valueSchema);
        this.i++;
        if (this.i < this.lineCount && this.indent(this.i) > indent) giveUp(); // a multi-line scalar
      }
      nodes.child(this.last, from, from + key.length);
      setEntry(out, key, value);
      const next = this.i;
      if (next >= this.lineCount || this.indent(next) < indent) {
        nodes.close(id, base);
        this.last = id;
        return out;
      }
      from = this.lineContent[next] as number;
      if (this.indent(next) > indent || this.isItem(from, this.lineEnd[next] as number)) giveUp();
    }
  }

  private seq(indent: number, schema: SchemaNode | undefined): unknown[] {
    const t = this.text;
    const nodes = this.nodes;
    const id = nodes.add(SEQ, this.lineContent[this.i] as number);
    const base = nodes.open();
    const itemSchema = childSchema(schema, 0);
    const out: unknown[] = [];
    for (;;) {
      const end = this.lineEnd[this.i] as number;
      const from = skipSpaces(t, (this.lineContent[this.i] as number) + 1, end);
      if (from === end || t.charCodeAt(from) === 35) {
        if (from < end && t.charCodeAt(from - 1) !== 32) giveUp();
        const next = ++this.i;
        if (next >= this.lineCount || this.indent(next) <= indent) giveUp(); // an empty item (null)
        out.push(this.block(this.indent(next), itemSchema));
      } else if (this.isItem(from, end)) {
        giveUp(); // `- - x`
      } else if (this.entryColon(from, end) >= 0) {
        // `- key: value`: a map whose indent is its first key's column.
        this.deeper();
        out.push(this.map(from - (this.lineStart[this.i] as number), from, itemSchema));
        this.depth--;
      } else {
        out.push(this.inline(from, end, itemSchema));
        this.i++;
        if (this.i < this.lineCount && this.indent(this.i) > indent) giveUp();
      }
      nodes.child(this.last, -1, -1);
      const next = this.i;
      if (next >= this.lineCount || this.indent(next) < indent) break;
      const nextFrom = this.lineContent[next] as number;
      const nextEnd = this.lineEnd[next] as number;
      if (this.indent(next) > indent || !this.isItem(nextFrom, nextEnd)) {
        // The next entry of a map whose value this sequence is (`key:` then `- …` at the key's indent).
        if (this.indent(next) === indent && this.entryColon(nextFrom, nextEnd) >= 0) break;
        giveUp();
      }
    }
    nodes.close(id, base);
    this.last = id;
    return out;
  }

  /** A value on the rest of one line: a scalar or a one-line flow collection, then at most a comment. */
  private inline(from: number, end: number, schema: SchemaNode | undefined): unknown {
    const t = this.text;
    const c = t.charCodeAt(from);
    if (c === 123 || c === 91 || c === 39 || c === 34) {
      const value = this.flowValue(from, end, schema);
      const after = skipSpaces(t, this.pos, end);
      if (after < end && !(t.charCodeAt(after) === 35 && t.charCodeAt(after - 1) === 32)) giveUp();
      return value;
    }
    // A comment starts at ` #` (searched on this line only: the text after may be long).
    let stop = from;
    while (stop < end && !(t.charCodeAt(stop) === 35 && t.charCodeAt(stop - 1) === 32)) stop++;
    const source = t.slice(from, stop).trimEnd();
    if (!PLAIN_START.test(source) || source.includes(': ') || source.endsWith(':')) giveUp();
    this.last = this.nodes.add(SCALAR, from);
    return plainValue(source, schema);
  }

  /** A flow collection or a quoted scalar at `from`; `pos` is left after it. */
  private flowValue(from: number, end: number, schema: SchemaNode | undefined): unknown {
    const t = this.text;
    const nodes = this.nodes;
    const c = t.charCodeAt(from);
    if (c === 39) {
      let k = from + 1;
      for (;;) {
        k = t.indexOf("'", k);
        if (k < 0 || k >= end) giveUp();
        if (t.charCodeAt(k + 1) === 39) k += 2;
        else break;
      }
      this.last = nodes.add(SCALAR, from);
      this.pos = k + 1;
      return t.slice(from + 1, k).replaceAll("''", "'");
    }
    if (c === 34) {
      const k = t.indexOf('"', from + 1);
      if (k < 0 || k >= end) giveUp();
      const value = t.slice(from + 1, k);
      if (value.includes('\\')) giveUp();
      this.last = nodes.add(SCALAR, from);
      this.pos = k + 1;
      return value;
    }
    if (c === 123) {
      const id = nodes.add(MAP, from);
      const base = nodes.open();
      const out: Record<string, unknown> = {};
      let k = skipSpaces(t, from + 1, end);
      if (t.charCodeAt(k) !== 125) {
        for (;;) {
          const keyEnd = t.indexOf(': ', k);
          if (keyEnd < 0 || keyEnd >= end) giveUp();
          const key = t.slice(k, keyEnd).trimEnd();
          if (key === '' || !PLAIN_START.test(key) || /[,[\]{}#'"]|: /.test(key)) giveUp();
          const value = this.flowItem(skipSpaces(t, keyEnd + 1, end), end, checkedChildSchema(out, key, schema));
          nodes.child(this.last, k, k + key.length);
          setEntry(out, key, value);
          k = skipSpaces(t, this.pos, end);
          const sep = t.charCodeAt(k);
          if (sep === 125) break;
          if (sep !== 44) giveUp();
          k = skipSpaces(t, k + 1, end);
          if (t.charCodeAt(k) === 125) giveUp(); // a trailing comma
        }
      }
      nodes.close(id, base);
      this.last = id;
      this.pos = k + 1;
      return out;
    }
    if (c === 91) {
      const id = nodes.add(SEQ, from);
      const base = nodes.open();
      const itemSchema = childSchema(schema, 0);
      const out: unknown[] = [];
      let k = skipSpaces(t, from + 1, end);
      if (t.charCodeAt(k) !== 93) {
        for (;;) {
          out.push(this.flowItem(k, end, itemSchema));
          nodes.child(this.last, -1, -1);
          k = skipSpaces(t, this.pos, end);
          const sep = t.charCodeAt(k);
          if (sep === 93) break;
          if (sep !== 44) giveUp();
          k = skipSpaces(t, k + 1, end);
          if (t.charCodeAt(k) === 93) giveUp();
        }
      }
      nodes.close(id, base);
      this.last = id;
      this.pos = k + 1;
      return out;
    }
    return giveUp();
  }

  /** A value inside a flow collection: nested, quoted, or plain up to `,`, `}` or `]`; `pos` is left after it. */
  private flowItem(from: number, end: number, schema: SchemaNode | undefined): unknown {
    const t = this.text;
    const c = t.charCodeAt(from);
    if (c === 123 || c === 91 || c === 39 || c === 34) {
      this.deeper();
      const value = this.flowValue(from, end, schema);
      this.depth--;
      return value;
    }
    let k = from;
    while (k < end) {
      const ch = t.charCodeAt(k);
      if (ch === 44 || ch === 125 || ch === 93) break;
      k++;
    }
    const source = t.slice(from, k).trimEnd();
    if (source === '' || !PLAIN_START.test(source) || /[[\]{}#'"]|:(?: |$)/.test(source)) giveUp();
    this.last = this.nodes.add(SCALAR, from);
    this.pos = k;
    return plainValue(source, schema);
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

/** A plain scalar's value where the schema is `schema`: its text where the schema wants text, as astToValue does. */
function plainValue(source: string, schema: SchemaNode | undefined): unknown {
  const value = resolvePlain(source);
  return value !== null && typeof value !== 'string' && wantsString(schema) ? source : value;
}

/**
 * The schema of `key`'s value in the map `out` being read. A duplicate key is an error worded
 * (with both locations) by the full reader. Every key read so far is an own property of `out`
 * (`__proto__` too: defined, not assigned), so asking it needs no set of seen keys per map
 * (thousands of maps in a big manifest).
 */
function checkedChildSchema(
  out: Record<string, unknown>,
  key: string,
  schema: SchemaNode | undefined,
): SchemaNode | undefined {
  if (Object.hasOwn(out, key)) giveUp();
  return childSchema(schema, key);
}

/** `__proto__` is kept as data: defined, not assigned (which would set the object's prototype). */
function setEntry(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** YamlSourceMap's answers (locate, locateKey, at) over the fast reader's node table. */
class FastSourceMap implements SourceMap {
  private lineStarts: number[] | undefined;

  constructor(
    private readonly file: string,
    private readonly nodes: Nodes,
    private readonly root: number,
    private readonly text: string,
  ) {}

  locate(path: string): SourceLocation {
    const { node, complete } = this.walk(path);
    const { kind, at, keyAt } = this.nodes;
    // The value's own place for a scalar found; else its key's, if it has one (the package's answer).
    const key = keyAt[node] as number;
    return this.at(complete && kind[node] === SCALAR ? (at[node] as number) : key >= 0 ? key : (at[node] as number));
  }

  locateKey(path: string): SourceLocation {
    const { node, complete } = this.walk(path);
    const key = this.nodes.keyAt[node] as number;
    if (complete && key >= 0) return this.at(key);
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

  /** The node at `path`, or its nearest ancestor there is (not `complete`). */
  private walk(path: string): { node: number; complete: boolean } {
    let node = this.root;
    for (const seg of parsePath(path)) {
      const next = this.child(node, seg);
      if (next < 0) return { node, complete: false };
      node = next;
    }
    return { node, complete: true };
  }

  /** The child of `node` at `seg` (an item of a sequence, the value of a map's key), or -1. */
  private child(node: number, seg: string | number): number {
    const { kind, kidStart, kidCount, kids, keyAt, keyEnd } = this.nodes;
    const first = kidStart[node] as number;
    const count = kidCount[node] as number;
    if (typeof seg === 'number' && kind[node] === SEQ)
      return seg >= 0 && seg < count ? (kids[first + seg] as number) : -1;
    if (kind[node] !== MAP) return -1;
    const key = String(seg);
    for (let k = first; k < first + count; k++) {
      const kid = kids[k] as number;
      const from = keyAt[kid] as number;
      if ((keyEnd[kid] as number) - from === key.length && this.text.startsWith(key, from)) return kid;
    }
    return -1;
  }
}

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let k = text.indexOf('\n'); k >= 0; k = text.indexOf('\n', k + 1)) starts.push(k + 1);
  return starts;
}
