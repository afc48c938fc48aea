/**
 * Redaction helpers shared by the logger and by error messages. They exist so that the
 * client secret, bearer tokens and the query strings of signed artwork URLs never reach a
 * log line, a report or an error message, whoever builds the text.
 */

export const REDACTED = '[redacted]';

/**
 * Key names whose values are always replaced, at any depth. Matched case-insensitively as
 * substrings, so `client_secret`, `clientSecret`, `access_token`, `refreshToken`,
 * `Authorization` and `x-api-secret` are all caught.
 */
const SENSITIVE_KEY = /secret|token|authorization|password|cookie/i;

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY.test(key);
}

/**
 * Drops the query string and fragment of a URL: a signed artwork URL carries its signature
 * there, and a URL is still recognisable without it. Text that is not an absolute URL is
 * returned with any query part cut off all the same (better to lose a harmless query than
 * to leak a signature).
 */
export function redactUrl(url: string): string {
  const cut = url.search(/[?#]/);
  if (cut === -1) return url;
  return `${url.slice(0, cut)}${url[cut] === '?' ? '?' + REDACTED : ''}`;
}

/** Every http(s) URL inside free text, with its query string dropped (see redactUrl). */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s"'<>]+/gi;

export function redactUrlsInText(text: string): string {
  return text.replace(URL_IN_TEXT, (u) => {
    // Sentence punctuation right after a URL belongs to the sentence, unless it starts the query.
    const tail = /[.,;:!)\]]+$/.exec(u)?.[0] ?? '';
    const body = u.slice(0, u.length - tail.length);
    return body.includes('?') ? `${redactUrl(body)}${tail}` : redactUrl(u);
  });
}

/**
 * A deep copy of `value` with sensitive keys replaced and URLs in strings stripped of their
 * query. Cycles are cut. Errors become plain objects carrying name, message and stack.
 */
export function redactDeep(value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === 'string') return redactUrlsInText(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, seen));
  const source: Record<string, unknown> =
    value instanceof Error
      ? {
          ...(value as unknown as Record<string, unknown>),
          type: value.name,
          message: value.message,
          stack: value.stack,
        }
      : (value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) {
    out[k] = isSensitiveKey(k) && v !== undefined && v !== null ? REDACTED : redactDeep(v, seen);
  }
  return out;
}
