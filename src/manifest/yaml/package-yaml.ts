import { CST, Lexer, LineCounter, parseDocument, type Document } from 'yaml';
import type { Diagnostic, RawDocument } from '../model.js';
import { DEFAULT_MAX_BYTES } from '../read-input.js';
import { manifestSchema } from '../schema/manifest-schema.js';
import { astToValue } from './ast-to-value.js';
import type { YamlReadOptions } from './read-yaml.js';
import { YamlSourceMap } from './yaml-source-map.js';

/**
 * The `yaml` package's side of the YAML reader (./read-yaml.ts): every text the fast reader
 * (./fast-yaml.ts) leaves, and every error. Loaded only for those texts.
 */

/** YAML (or JSON) text → data, source map and diagnostics by the `yaml` package, whatever the text. */
export function parseYamlPackage(
  file: string,
  text: string,
  opts: YamlReadOptions,
): Pick<RawDocument, 'doc' | 'sources' | 'diagnostics'> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.2',
    schema: 'core',
    lineCounter,
    prettyErrors: false,
    // Checked by astToValue instead, which names BOTH locations.
    uniqueKeys: false,
    merge: false,
  }) as Document.Parsed;
  const sources = new YamlSourceMap(file, doc, lineCounter);
  const diagnostics: Diagnostic[] = [];

  const directive = doc.directives?.yaml;
  if (directive?.explicit && directive.version !== '1.2') {
    const at = Math.max(0, text.indexOf('%YAML'));
    diagnostics.push({
      severity: 'error',
      code: 'yaml.version',
      message:
        `%YAML ${directive.version} is not supported: manifests are YAML 1.2 ` +
        '(in 1.1 `NO` means false and `01234` is octal). Remove the directive',
      source: sources.at(at),
    });
    return { sources, diagnostics };
  }
  for (const problem of [...doc.errors, ...doc.warnings]) {
    // The package's own recursion overflowing: block collections nested some hundreds deep.
    const tooDeep = problem.code === 'RESOURCE_EXHAUSTION';
    diagnostics.push({
      severity: 'error',
      code: tooDeep ? 'manifest.limit' : `yaml.${problem.code.toLowerCase().replace(/_/g, '-')}`,
      message: tooDeep ? `lists and maps nested too deep to read; ${HANDFUL}` : problem.message,
      source: sources.at(problem.pos[0]),
    });
  }
  if (diagnostics.length > 0) return { sources, diagnostics };
  if (doc.contents === null || (doc.contents as { value?: unknown }).value === null) {
    diagnostics.push({
      severity: 'error',
      code: 'manifest.empty',
      message: 'the manifest is empty',
      source: { file, line: 1, column: 1 },
    });
    return { sources, diagnostics };
  }
  const converted = astToValue(doc, sources, manifestSchema, opts);
  diagnostics.push(...converted.diagnostics);
  return { doc: converted.aborted ? undefined : converted.value, sources, diagnostics };
}

/**
 * The package holds about a kilobyte for each value it reads, and a text in flow style (JSON)
 * packs a value into every two or three bytes: 10 MB of `[[[…` or `[],[],…` took minutes and
 * more memory than the heap has. So nesting and values are counted first, by the package's
 * lexer (which keeps nothing), and a text past either limit is not parsed.
 */
const MAX_NESTING = 100;
const HANDFUL = 'a manifest needs a handful of levels';
const BYTES_PER_VALUE = 6;
/** The lexer's marks between tokens: not text. */
export const LEXER_MARKS = new Set(['\u0002', '\u0018', '\u001f']);
export const OPENERS = new Set(['flow-map-start', 'flow-seq-start']);
export const CLOSERS = new Set(['flow-map-end', 'flow-seq-end']);
const VALUES = new Set([
  'alias',
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'block-scalar-header',
  'seq-item-ind',
  ...OPENERS,
]);

/** The first place `text` passes the nesting or the value limit, as an error there; undefined within both. */
export function overLimit(file: string, text: string, maxBytes = DEFAULT_MAX_BYTES): Diagnostic | undefined {
  const maxValues = Math.floor(maxBytes / BYTES_PER_VALUE);
  let offset = 0;
  let depth = 0;
  let values = 0;
  for (const token of new Lexer().lex(text)) {
    if (LEXER_MARKS.has(token)) continue;
    const at = offset;
    offset += token.length;
    const type = CST.tokenType(token) ?? 'scalar';
    if (CLOSERS.has(type)) depth--;
    if (OPENERS.has(type) && ++depth > MAX_NESTING)
      return limitAt(file, text, at, `lists and maps nested more than ${MAX_NESTING} deep; ${HANDFUL}`);
    if (VALUES.has(type) && ++values > maxValues)
      return limitAt(
        file,
        text,
        at,
        `more than ${maxValues} values (keys, texts, numbers, lists and maps): at most one per ` +
          `${BYTES_PER_VALUE} bytes of the limit manifestMaxBytes (HTORDER_MANIFEST_MAX_BYTES)`,
      );
  }
  return undefined;
}

function limitAt(file: string, text: string, offset: number, message: string): Diagnostic {
  const lines = text.slice(0, offset).split('\n');
  const source = { file, line: lines.length, column: (lines.at(-1) ?? '').length + 1 };
  return { severity: 'error', code: 'manifest.limit', message, source };
}
