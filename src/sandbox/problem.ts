import type { ProblemDetails } from '../api/types.js';
import type { Reply } from './reply.js';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** An RFC 7807 problem reply (type, title, status, detail, instance), plus any extra members. */
export function problem(
  status: number,
  detail: string,
  instance: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Reply {
  const body: ProblemDetails = {
    type: `https://tools.ietf.org/html/rfc9110#status-${status}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    instance,
    ...extra,
  };
  return { status, body, contentType: 'application/problem+json', headers };
}

/** A 400 problem carrying `errors` keyed by field, the ASP.NET model-validation shape. */
export function fieldErrors(instance: string, errors: Record<string, string[]>): Reply {
  return problem(400, 'One or more validation errors occurred.', instance, { errors });
}

/** Thrown inside a handler to answer with a problem; caught by the server. */
export class ProblemError extends Error {
  constructor(readonly reply: Reply) {
    super(
      typeof reply.body === 'object' && reply.body !== null ? String((reply.body as ProblemDetails).detail) : 'problem',
    );
  }
}
