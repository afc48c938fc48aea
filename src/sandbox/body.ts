import type { ApiContext } from './context.js';
import { fieldErrors, problem, ProblemError } from './problem.js';

/**
 * The four JSON content types the spec lists for POST /Jobs and PATCH: application/json,
 * application/json-patch+json, text/json and application/*+json. Anything else is 415.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type === 'text/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

/** Parses the request body as JSON, or throws the problem reply the API would send. */
export function readJson(ctx: ApiContext): { value: unknown; raw: string } {
  const ct = ctx.headers['content-type'];
  if (!isJsonContentType(ct)) {
    throw new ProblemError(
      problem(415, `Content type '${ct ?? '(none)'}' is not supported; send application/json.`, ctx.path),
    );
  }
  const raw = ctx.rawBody.toString('utf8');
  if (raw.trim() === '')
    throw new ProblemError(fieldErrors(ctx.path, { '': ['A non-empty request body is required.'] }));
  try {
    return { value: JSON.parse(raw), raw };
  } catch (err) {
    throw new ProblemError(fieldErrors(ctx.path, { $: [`The JSON value is invalid: ${(err as Error).message}`] }));
  }
}
