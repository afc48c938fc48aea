import type { Diagnostic, FieldPath, Severity, SourceMap } from '../../manifest/model.js';

/** A located diagnostic: the field path plus where that field was written. */
export function diagnostic(
  sources: SourceMap,
  severity: Severity,
  code: string,
  field: FieldPath,
  message: string,
): Diagnostic {
  return { severity, code, message, field, source: sources.locate(field) };
}
