import { CST, Lexer } from 'yaml';
import type { Diagnostic, RawDocument } from '../model.js';
import { CLOSERS, LEXER_MARKS, OPENERS, overLimit } from '../yaml/package-yaml.js';
import { parseYamlText, readTextDocument, type YamlReadOptions } from '../yaml/read-yaml.js';

/**
 * The JSON manifest reader. JSON.parse decides what is valid JSON (so YAML-only syntax is
 * refused); the values and locations then come from the YAML 1.2 parser, of which JSON is
 * a subset, so JSON manifests get the same duplicate-key checks, schema-guided text values
 * and line:column locations as YAML ones.
 */
export async function readJsonDocument(
  file: string,
  bytes?: Uint8Array,
  opts: YamlReadOptions = {},
): Promise<RawDocument> {
  return readTextDocument(file, 'json', bytes, opts, parseJsonText);
}

async function parseJsonText(
  file: string,
  text: string,
  opts: YamlReadOptions,
): Promise<Pick<RawDocument, 'doc' | 'sources' | 'diagnostics'>> {
  // Before JSON.parse, which spends seconds and gigabytes on millions of nested or empty lists too.
  const limit = overLimit(file, text, opts.maxBytes);
  if (limit) return { sources: { locate: () => ({ file }) }, diagnostics: [limit] };
  try {
    JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const lines = text.slice(0, jsonErrorOffset(text, message)).split('\n');
    const source = { file, line: lines.length, column: (lines.at(-1) ?? '').length + 1 };
    const diagnostic: Diagnostic = {
      severity: 'error',
      code: 'json.syntax',
      message: `invalid JSON: ${cleanMessage(message)}`,
      source,
    };
    return { sources: { locate: () => ({ file }) }, diagnostics: [diagnostic] };
  }
  return parseYamlText(file, text, opts, true);
}

/** V8's message without its position (given as line:column instead) or a copy of the text. */
function cleanMessage(message: string): string {
  return message.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*" is not valid JSON$/s, '');
}

/**
 * Where a text JSON.parse refused first goes wrong, as an offset: the position V8's message
 * gives; for the errors it gives none ("Unexpected token"), the first token, as the yaml
 * package's lexer splits the text, that JSON does not allow there; else the end.
 */
function jsonErrorOffset(text: string, message: string): number {
  const end = Math.max(0, text.length - 1);
  const at = / at position (\d+)/.exec(message);
  if (at !== null) return Math.min(Number(at[1]), end);
  return firstNonJsonToken(text) ?? end;
}

const JSON_TOKENS = new Set([
  'flow-map-start',
  'flow-map-end',
  'flow-seq-start',
  'flow-seq-end',
  'comma',
  'map-value-ind',
  'double-quoted-scalar',
]);
const JSON_WORD = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;
const SEPARATORS = new Set(['comma', 'map-value-ind']);

function firstNonJsonToken(text: string): number | undefined {
  let offset = 0;
  let previous: string | undefined;
  for (const token of new Lexer().lex(text)) {
    if (LEXER_MARKS.has(token)) continue;
    const at = offset;
    offset += token.length;
    const type = CST.tokenType(token) ?? 'plain-scalar';
    if (type === 'space' || type === 'newline') continue;
    if (type === 'plain-scalar' ? !JSON_WORD.test(token) : !JSON_TOKENS.has(type)) return at;
    // A value missing: `[,`, `,]`, `,,`, `: }`, `: ,`.
    if (SEPARATORS.has(type) || CLOSERS.has(type)) {
      if (previous !== undefined && SEPARATORS.has(previous)) return at;
      if (previous !== undefined && OPENERS.has(previous) && SEPARATORS.has(type)) return at;
    }
    previous = type;
  }
  return undefined;
}
