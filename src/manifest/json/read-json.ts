import type { RawDocument } from '../model.js';
import { parseYamlText, readTextDocument, type YamlReadOptions } from '../yaml/read-yaml.js';
import { LineCounter } from 'yaml';
import { YamlSourceMap } from '../yaml/yaml-source-map.js';
import { jsonErrorOffset } from './json-error-offset.js';

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

export async function parseJsonText(
  file: string,
  text: string,
  opts: YamlReadOptions,
): Promise<Pick<RawDocument, 'doc' | 'sources' | 'diagnostics'>> {
  try {
    JSON.parse(text);
  } catch (err) {
    const lineCounter = new LineCounter();
    // Feed the counter the line starts (the first line too) so an offset maps to line:column.
    lineCounter.addNewLine(0);
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineCounter.addNewLine(i + 1);
    const sources = new YamlSourceMap(file, undefined, lineCounter);
    const message = (err as Error).message;
    const offset = jsonErrorOffset(text);
    return {
      sources,
      diagnostics: [
        {
          severity: 'error',
          code: 'json.syntax',
          message: `invalid JSON: ${cleanMessage(message)}`,
          source: sources.at(offset),
        },
      ],
    };
  }
  return parseYamlText(file, text, opts);
}

/** V8's message without its position (given as line:column instead) or a copy of the text. */
function cleanMessage(message: string): string {
  return message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, "(?:[^"\\]|\\.)*" is not valid JSON$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '');
}
