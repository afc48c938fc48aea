import { manifestSchema } from '../schema/manifest-schema.js';
import type { ManifestFormat, RawDocument } from '../model.js';
import {
  decodeUtf8,
  readInputBytes,
  sha256Hex,
  tooLargeMessage,
  DEFAULT_MAX_BYTES,
  INPUT_ENCODING,
  INPUT_TOO_LARGE,
  type ReadLimits,
  unreadDocument,
} from '../read-input.js';
import type { AliasLimits } from './ast-to-value.js';
import { parseFastYaml } from './fast-yaml.js';

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
  parse: (file: string, text: string, opts: YamlReadOptions) => Promise<Parsed>,
): Promise<RawDocument> {
  if (bytes === undefined) {
    const read = await readInputBytes(file, opts);
    if (read.diagnostic) return unreadDocument(file, format, read.diagnostic);
    bytes = read.bytes;
  }
  const sha256 = sha256Hex(bytes);
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const fail = (code: string, message: string): RawDocument =>
    unreadDocument(file, format, { severity: 'error', code, message, source: { file } }, sha256);
  if (bytes.byteLength > maxBytes) return fail(INPUT_TOO_LARGE, tooLargeMessage(bytes.byteLength, maxBytes));
  const text = decodeUtf8(bytes);
  if (text === undefined) return fail(INPUT_ENCODING, 'the file is not valid UTF-8; save it as UTF-8');
  return { file, format, sha256, ...(await parse(file, text, opts)) };
}

type Parsed = Pick<RawDocument, 'doc' | 'sources' | 'diagnostics'>;

/**
 * YAML (or JSON) text → plain data, source map and diagnostics: by the fast reader when the
 * text is in its subset (./fast-yaml.ts: most manifests), else by the `yaml` package, which
 * is loaded only then, and only for a text within its nesting and value limits (`limitsChecked`:
 * the caller has counted them).
 */
export async function parseYamlText(
  file: string,
  text: string,
  opts: YamlReadOptions,
  limitsChecked = false,
): Promise<Parsed> {
  const fast = parseFastYaml(file, text, manifestSchema);
  if (fast) return fast;
  const { overLimit, parseYamlPackage } = await import('./package-yaml.js');
  const limit = limitsChecked ? undefined : overLimit(file, text, opts.maxBytes);
  if (limit) return { sources: { locate: () => ({ file }) }, diagnostics: [limit] };
  return parseYamlPackage(file, text, opts);
}
