import { type Document, LineCounter, parseDocument } from 'yaml';
import { manifestSchema } from '../schema/manifest-schema.js';
import type { Diagnostic, ManifestFormat, RawDocument, SourceMap } from '../model.js';
import {
  decodeUtf8,
  readInputBytes,
  sha256Hex,
  tooLargeMessage,
  DEFAULT_MAX_BYTES,
  INPUT_ENCODING,
  INPUT_TOO_LARGE,
  type ReadLimits,
} from '../read-input.js';
import { type AliasLimits, astToValue } from './ast-to-value.js';
import { YamlSourceMap } from './yaml-source-map.js';

/**
 * The YAML manifest reader: bytes → RawDocument (plain data + a SourceMap). YAML 1.2 core
 * schema only; syntax problems, duplicate keys, alias bombs and a `%YAML 1.1` directive
 * become diagnostics with line:column, never exceptions.
 */

export type YamlReadOptions = ReadLimits & AliasLimits;

export async function readYamlDocument(
  file: string,
  bytes?: Uint8Array,
  opts: YamlReadOptions = {},
): Promise<RawDocument> {
  return readTextDocument(file, 'yaml', bytes, opts, parseYamlText);
}

/** Shared by the YAML and JSON readers: read, size-check, decode, then the format's parser. */
export async function readTextDocument(
  file: string,
  format: ManifestFormat,
  bytes: Uint8Array | undefined,
  opts: YamlReadOptions,
  parse: (file: string, text: string, opts: YamlReadOptions) => Parsed | Promise<Parsed>,
): Promise<RawDocument> {
  // Nothing was parsed: every location is the file's.
  const emptySources: SourceMap = { locate: () => ({ file }) };
  if (bytes === undefined) {
    const read = await readInputBytes(file, opts);
    if (read.diagnostic) return { file, format, sha256: '', sources: emptySources, diagnostics: [read.diagnostic] };
    bytes = read.bytes;
  }
  const sha256 = sha256Hex(bytes);
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const fail = (code: string, message: string): RawDocument => ({
    file,
    format,
    sha256,
    sources: emptySources,
    diagnostics: [{ severity: 'error', code, message, source: { file } }],
  });
  if (bytes.byteLength > maxBytes) return fail(INPUT_TOO_LARGE, tooLargeMessage(bytes.byteLength, maxBytes));
  const text = decodeUtf8(bytes);
  if (text === undefined) return fail(INPUT_ENCODING, 'the file is not valid UTF-8; save it as UTF-8');
  return { file, format, sha256, ...(await parse(file, text, opts)) };
}

type Parsed = Pick<RawDocument, 'doc' | 'sources' | 'diagnostics'>;

/** YAML (or JSON) text → plain data, source map and diagnostics, by the `yaml` package. */
export function parseYamlText(file: string, text: string, opts: YamlReadOptions): Parsed {
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
    diagnostics.push({
      severity: 'error',
      code: `yaml.${problem.code.toLowerCase().replace(/_/g, '-')}`,
      message: problem.message,
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
