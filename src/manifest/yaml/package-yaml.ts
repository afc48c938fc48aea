import { LineCounter, parseDocument, type Document } from 'yaml';
import type { Diagnostic, RawDocument } from '../model.js';
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
