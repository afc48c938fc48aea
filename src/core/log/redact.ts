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

/**
 * Secret VALUES in use by this process: the client secret and the bearer tokens it was
 * handed. A server that echoes the Authorization header or the secret into a message or a
 * body must not get them into a report, a terminal or a log: scrubSecrets replaces them
 * wherever they appear. The newest few tokens are kept (a daemon refreshes for ever).
 */
const liveSecrets: string[] = [];
const MAX_LIVE_SECRETS = 32;
/**
 * Secrets of the configuration (the client secret, webhook URLs and their secret parts): a few,
 * known at start, and never pushed out by the tokens a daemon keeps refreshing.
 */
const configuredSecrets: string[] = [];
const MAX_CONFIGURED_SECRETS = 256;
/** Shorter values would scrub ordinary words out of messages; real secrets and tokens are long. */
const MIN_SECRET_LENGTH = 8;

/** A token this process was handed (the newest MAX_LIVE_SECRETS kept), or, `configured`, a secret of its configuration. */
export function rememberSecret(value: string, kind: 'token' | 'configured' = 'token'): void {
  if (value.length < MIN_SECRET_LENGTH || liveSecrets.includes(value) || configuredSecrets.includes(value)) return;
  if (kind === 'configured') {
    if (configuredSecrets.length < MAX_CONFIGURED_SECRETS) configuredSecrets.push(value);
    // Longest first: a secret that contains another is replaced whole, not around the other's hole.
    configuredSecrets.sort((a, b) => b.length - a.length);
    return;
  }
  liveSecrets.push(value);
  if (liveSecrets.length > MAX_LIVE_SECRETS) liveSecrets.splice(0, liveSecrets.length - MAX_LIVE_SECRETS);
}

/**
 * A URL whose path or query is a credential (a Slack, Teams or Discord webhook): the URL, its path
 * with the query, and every part of them that could be a token — a path segment, query value or
 * password of 16 characters or more, or of 8 or more with a digit in it — are scrubbed wherever
 * they appear, so a receiver that echoes the path it was asked for (`no such hook:
 * /services/T…/B…/x…`) cannot put the token into a log. Words such as `services` or `webhooks`
 * are left alone.
 */
export function rememberSecretUrl(url: string): void {
  rememberSecret(url, 'configured');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return;
  }
  rememberSecret(`${parsed.pathname}${parsed.search}`, 'configured');
  const parts = [
    ...parsed.pathname.split('/').map(decodedOrSelf),
    ...parsed.pathname.split('/'),
    ...[...parsed.searchParams.values()],
    decodedOrSelf(parsed.password),
  ];
  for (const part of parts)
    if (part.length >= 16 || (part.length >= MIN_SECRET_LENGTH && /\d/.test(part))) rememberSecret(part, 'configured');
}

function decodedOrSelf(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `Bearer <token>` in any text, whoever's token it is. */
const BEARER_IN_TEXT = /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi;
/** `"access_token": "…"`, `client_secret=…` and the like inside free text (a body quoted in a message). */
const SECRET_PAIR_IN_TEXT =
  /(["']?(?:access_token|refresh_token|id_token|client_secret|clientSecret|password|authorization|api[_-]?key)["']?\s*[:=]\s*["']?)([^"'\s,&}]+)/gi;

/**
 * A word (any case) that every match of BEARER_IN_TEXT or SECRET_PAIR_IN_TEXT contains: text
 * without one is left as it is after one scan, not two replaces (every string of every log line
 * goes through here).
 */
const SECRET_HINT = /bearer|basic|token|secret|password|authorization|api[_-]?key/i;

/** Text with every live secret value, bearer credential and `secret_key=value` pair replaced. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of configuredSecrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const secret of liveSecrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  if (!SECRET_HINT.test(out)) return out;
  return out.replace(BEARER_IN_TEXT, `$1 ${REDACTED}`).replace(SECRET_PAIR_IN_TEXT, `$1${REDACTED}`);
}

/** What server text becomes before it is shown or stored: secrets scrubbed, signed URLs cut. */
export function scrubServerText(text: string): string {
  return redactUrlsInText(scrubSecrets(text));
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
  // Every URL URL_IN_TEXT matches has `://`: text without it has none to cut.
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (u) => {
    // Sentence punctuation right after a URL belongs to the sentence, unless it starts the query.
    const body = u.slice(0, endOfBody(u));
    return body.includes('?') ? `${redactUrl(body)}${u.slice(body.length)}` : redactUrl(u);
  });
}

const SENTENCE_PUNCTUATION = '.,;:!)]';

/**
 * Where a URL's trailing sentence punctuation starts: a scan back from the end, once. (A regular
 * expression `[.,;:!)\]]+$` retries from every character of a long run of dots that does not
 * reach the end: quadratic, and this runs on every log line.)
 */
function endOfBody(u: string): number {
  let end = u.length;
  while (end > 0 && SENTENCE_PUNCTUATION.includes(u[end - 1])) end--;
  return end;
}

/**
 * A deep copy of `value` with sensitive keys replaced, live secrets scrubbed from strings
 * (scrubSecrets) and URLs in strings stripped of their query. Cycles are cut. Errors become plain objects carrying name, message and stack.
 */
export function redactDeep(value: unknown): unknown {
  return deepCopy(value, scrubServerText, new WeakSet());
}

/**
 * A deep copy of a server's answer with secret-named keys replaced and live secrets scrubbed
 * from strings; everything else (URLs, their fragments) kept as the server sent it.
 */
export function scrubSecretsDeep(value: unknown): unknown {
  return deepCopy(value, scrubSecrets, new WeakSet());
}

function deepCopy(value: unknown, text: (s: string) => string, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return text(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => deepCopy(v, text, seen));
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
    out[k] = SENSITIVE_KEY.test(k) && v !== undefined && v !== null ? REDACTED : deepCopy(v, text, seen);
  }
  return out;
}
