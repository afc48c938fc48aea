import { ApiError } from '../api/errors.js';
import type { Diagnostic, FieldPath, JobList, Manifest } from '../manifest/model.js';

/**
 * Whether `err` is the API refusing the job itself (its content: a 4xx other than 401 and 429,
 * or — to a `validateOnly` dry run, "usually an invalid payload" (spec) — a 500), as opposed
 * to the API being unavailable (429, credentials refused, 5xx, no answer): only a refusal
 * makes a job invalid; the rest is retried later (exit 3).
 */
export function isRefusal(err: unknown, opts: { fiveHundred: boolean }): boolean {
  if (!(err instanceof ApiError) || err.kind !== 'http' || err.status === null) return false;
  if (err.status === 500) return opts.fiveHundred;
  return err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 429;
}

/**
 * Turns the API's refusal of a job into located Diagnostics: problem details, `errors` by
 * field, and job `validationMessages`. The spec does not show the format of the messages or
 * of their error codes, so locating is best effort: a message that starts with (or names)
 * a request path such as `items[2].quantity`, `deliveryAddress.state` or `promocode` is
 * filed on that job's field; anything else stays on the job.
 */
export function apiDiagnostics(err: unknown, manifest: Manifest<JobList>, jobIndex: number): Diagnostic[] {
  const jobPath = `jobs[${jobIndex}]`;
  const at = (requestPath: string | undefined): Pick<Diagnostic, 'field' | 'source'> => {
    const field = requestPath ? toManifestPath(jobPath, requestPath, manifest, jobIndex) : jobPath;
    return { field, source: manifest.sources.locate(field) };
  };
  if (!(err instanceof ApiError)) {
    return [{ severity: 'error', code: 'api.error', message: errorText(err), ...at(undefined) }];
  }
  const out: Diagnostic[] = [];
  for (const m of err.validationMessages ?? []) {
    out.push({
      severity: 'error',
      code: m.errorCode ? `api.${m.errorCode}` : 'api.validation',
      message: `the API refused it: ${m.message}`,
      ...at(requestPathIn(m.message)),
    });
  }
  for (const [key, messages] of Object.entries(err.errors ?? {})) {
    const path = key.replace(/^\$\.?/, '');
    for (const message of messages) {
      out.push({
        severity: 'error',
        code: 'api.field',
        message: `the API refused ${path || 'the request'}: ${message}`,
        ...at(path || undefined),
      });
    }
  }
  if (out.length === 0) {
    out.push({
      severity: 'error',
      code: err.status === null ? `api.${err.kind}` : `api.http-${err.status}`,
      message: err.message,
      ...at(requestPathIn(err.detail ?? '')),
    });
  }
  return out;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const REQUEST_PATH = /\b(items\[\d+\](?:\.[A-Za-z][A-Za-z0-9]*)*|deliveryAddress(?:\.[A-Za-z][A-Za-z0-9]*)?)/;
const JOB_FIELDS = [
  'orderNumber',
  'orderComment',
  'customerUserId',
  'dateDue',
  'mustDate',
  'description',
  'promocode',
  'orderGroup',
  'orderGroupSequence',
  'locationCodeOverride',
];
const JOB_FIELD = new RegExp(`^(${JOB_FIELDS.join('|')})\\b`);

/** The request path a message names, if any: `items[2].quantity`, `deliveryAddress.state`, `promocode`. */
export function requestPathIn(message: string): string | undefined {
  return REQUEST_PATH.exec(message)?.[1] ?? JOB_FIELD.exec(message)?.[1];
}

/**
 * A request path → the manifest path the user wrote. Items keep their index (the API adds
 * lines in the order supplied). The manifest may have written the country as `country`
 * (resolved into countryCodeISO2) or the value may have come from `defaults`; SourceMap
 * falls back to the nearest ancestor when the exact key is absent.
 */
function toManifestPath(
  jobPath: FieldPath,
  requestPath: string,
  manifest: Manifest<JobList>,
  jobIndex: number,
): FieldPath {
  const country = manifest.jobs.at(jobIndex)?.deliveryAddress?.countryCodeISO2;
  if (requestPath === 'deliveryAddress.countryCodeISO2' && country === undefined) {
    return `${jobPath}.deliveryAddress.country`;
  }
  return `${jobPath}.${requestPath}`;
}
