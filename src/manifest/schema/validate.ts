import type { ErrorObject } from 'ajv/dist/2020.js';
import type { Diagnostic, RawDocument, SourceMap } from '../model.js';
import { formatPath, pointerKeys, type PathSegment } from '../field-path.js';
import { validateManifest } from './manifest-validator.js';
import { describeError } from './messages.js';

/**
 * Validates a raw document (any format) against schemas/manifest.schema.json and turns
 * each ajv error into a Diagnostic with a readable field path, a location and a message a
 * person can act on. The validator is generated at build time (manifest-validator.ts).
 */

/** Diagnostics for every schema violation in `raw.doc` (none when it conforms). */
export function validateDocument(raw: Pick<RawDocument, 'doc' | 'sources'>): Diagnostic[] {
  if (raw.doc === undefined) return [];
  if (validateManifest(raw.doc)) return [];
  const errors = pruneErrors(validateManifest.errors ?? []);
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const segments = pointerToSegments(raw.doc, error.instancePath);
    const described = describeError(error, segments);
    const field = formatPath(described.segments);
    const key = `${field}\u0000${described.message}`;
    if (seen.has(key)) continue; // e.g. `type` and `minimum` on one value say the same thing
    seen.add(key);
    const source = described.atKey && raw.sources.locateKey ? raw.sources.locateKey(field) : raw.sources.locate(field);
    diagnostics.push({
      severity: 'error',
      code: described.code,
      message: described.message,
      field: field || undefined,
      source,
    });
  }
  return dropRestatedRequired(diagnostics);
}

/**
 * The schema's findings on `jobs`, jobs `from` onwards of a template document (`{ version: 1, jobs }`),
 * their fields and locations the whole document's (`jobs[from + i]…`, looked up in `sources`):
 * what validateDocument says of those jobs in the whole document, as no rule of the schema
 * relates two jobs. Lets a reader check a document a slice of jobs at a time.
 */
export function validateJobs(jobs: readonly unknown[], from: number, sources: SourceMap): Diagnostic[] {
  const local: SourceMap = { locate: (path) => sources.locate(shifted(path, from) as string) };
  local.locateKey = local.locate;
  const schema: Diagnostic[] = [];
  for (const d of validateDocument({ doc: { version: 1, jobs }, sources: local }))
    schema.push({ ...d, field: shifted(d.field, from) });
  return schema;
}

/** A slice's path (`jobs[i]…`, i within the slice) as the whole document's (`jobs[from + i]…`). */
function shifted(path: string | undefined, from: number): string | undefined {
  const m = path === undefined ? null : /^jobs\[(\d+)\]/.exec(path);
  return m === null ? path : `jobs[${Number(m[1]) + from}]${(path as string).slice(m[0].length)}`;
}

/**
 * `CustomerReference: x` yields both "unknown field CustomerReference; did you mean
 * customerReference?" and "missing customerReference": the first says it all.
 */
function dropRestatedRequired(diagnostics: Diagnostic[]): Diagnostic[] {
  const suggested = new Set<string>();
  for (const d of diagnostics) {
    const m = d.code === 'schema.unknown-field' && d.field ? /did you mean "([^"]+)"\?$/.exec(d.message) : null;
    if (m && d.field) suggested.add(`${d.field.slice(0, d.field.lastIndexOf('.'))}.${m[1]}`);
  }
  return diagnostics.filter((d) => !(d.code === 'schema.required' && d.field !== undefined && suggested.has(d.field)));
}

/**
 * Drops errors that only restate another: the `if` wrapper of an if/then, and the failed
 * branches under an `anyOf` (the anyOf error itself says "needs A or B").
 */
function pruneErrors(errors: ErrorObject[]): ErrorObject[] {
  const anyOfPaths = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/`);
  return errors.filter((e) => e.keyword !== 'if' && !anyOfPaths.some((p) => e.schemaPath.startsWith(p)));
}

/** `/jobs/0/items/1` → ['jobs', 0, 'items', 1], using the data to tell indices from keys. */
function pointerToSegments(doc: unknown, pointer: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let node: unknown = doc;
  for (const key of pointerKeys(pointer)) {
    if (Array.isArray(node)) {
      const index = Number(key);
      segments.push(index);
      node = node[index];
    } else {
      segments.push(key);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return segments;
}
