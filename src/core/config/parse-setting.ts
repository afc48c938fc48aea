import { isAbsolute, join, resolve } from 'node:path';
import { parseOffset } from '../clock.js';
import { UsageError } from '../errors.js';
import type { SettingType } from './settings.js';

/**
 * One parser per setting type. Each takes the raw value as it came (a flag's or variable's
 * text, or a YAML scalar from a profile) and the name of where it came from (`--concurrency`,
 * `HTORDER_CONCURRENCY`, `concurrency of profile "nz" in /home/me/.config/htorder/config.yaml`),
 * and either returns the typed value or throws UsageError (exit 2) naming that source. A value
 * is never guessed: `ture` is not false, `8x` is not 8.
 */

const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);

export function parseBoolean(raw: unknown, source: string): boolean {
  if (typeof raw === 'boolean') return raw;
  const text = String(raw).trim().toLowerCase();
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  throw new UsageError(`${source} must be true or false, got "${String(raw)}"`);
}

/** Digits only, from `min` to `max`; `what` names the kind of number in the message. */
export function parseInteger(raw: unknown, source: string, min: number, max: number, what = 'a whole number'): number {
  const text = String(raw).trim();
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${source} must be ${what} from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

/** A sum of money from 0 to `max`, at most two decimals (`250`, `1999.90`); never a guess (`1,000` is refused). */
export function parseAmount(raw: unknown, source: string, max: number): number {
  const text = String(raw).trim();
  if (!/^\d+(?:\.\d{1,2})?$/.test(text) || Number(text) > max) {
    throw new UsageError(`${source} must be an amount from 0 to ${max} with at most two decimals, got "${text}"`);
  }
  return Number(text);
}

/** A length of time (`12h`, `36h`, `7d`, `1d12h`, `0`) from 0 to `max` ms, in milliseconds; never signed. */
export function parseDuration(raw: unknown, source: string, max: number): number {
  const text = String(raw).trim();
  const ms = durationMs(text, max);
  if (ms === undefined) throw new UsageError(`${source} ${durationRule(max)}, got "${text}"`);
  return ms;
}

/** The milliseconds of a length of time from 0 to `max`, or undefined when `text` is not one. */
export function durationMs(text: string, max: number): number | undefined {
  const ms = /^[+-]/.test(text) ? undefined : parseOffset(text);
  return ms === undefined || ms > max ? undefined : ms;
}

/** What a length of time must look like, for messages. */
export function durationRule(max: number): string {
  return `must be a length of time such as 12h, 36h or 7d (units ms, s, m, h, d), or 0, at most ${max / 86_400_000}d`;
}

export function parsePort(raw: unknown, source: string): number {
  return parseInteger(raw, source, 0, 65535, 'a port number');
}

/** An http(s) URL without query, fragment or credentials; returned without trailing slashes. */
export function parseUrl(raw: unknown, source: string): string {
  const value = String(raw).trim();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${source}: "${value}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`${source}: "${value}" must be an http(s) URL`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new UsageError(`${source}: must not contain a query, fragment or credentials`);
  }
  return url.toString().replace(/\/+$/, '');
}

export function parseEnum(raw: unknown, source: string, values: readonly string[]): string {
  const text = String(raw).trim();
  if (!values.includes(text)) throw new UsageError(`${source} must be one of ${values.join(', ')}, got "${text}"`);
  return text;
}

/** Text that must not be blank. A secret's value is never repeated in a message. */
export function parseString(raw: unknown, source: string): string {
  const text = String(raw).trim();
  if (text === '') throw new UsageError(`${source} must not be empty`);
  return text;
}

/** A host name or IP address to listen on: no scheme, port or path. */
export function parseHost(raw: unknown, source: string): string {
  const text = String(raw).trim();
  if (!/^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[?[0-9A-Fa-f:.]+\]?)$/.test(text)) {
    throw new UsageError(`${source} must be a host name or IP address (no scheme or port), got "${text}"`);
  }
  return text.replace(/^\[(.*)\]$/, '$1');
}

/** A signed length of time (`+3d`, `-12h`, `1d12h`, `90m`, `0`), in milliseconds; at most a century either way. */
export function parseSignedDuration(raw: unknown, source: string): number {
  const text = String(raw).trim();
  const ms = parseOffset(text);
  if (ms === undefined) {
    throw new UsageError(
      `${source} must be a signed length of time such as +3d, -12h, 1d12h, 90m or 0 (units d, h, m, s, ms; at most a century), got "${text}"`,
    );
  }
  return ms;
}

/** A file or folder: `~/` is the home folder, a relative path is relative to `baseDir`. */
export function parsePath(raw: unknown, source: string, baseDir: string, home: string): string {
  const path = parseString(raw, source);
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

export type ParsedValue = string | number | boolean;

/** The parser of `type`, applied. */
export function parseSettingValue(
  type: SettingType,
  raw: unknown,
  source: string,
  paths: { baseDir: string; home: string },
): ParsedValue {
  switch (type.kind) {
    case 'boolean':
      return parseBoolean(raw, source);
    case 'integer':
      return parseInteger(raw, source, type.min, type.max);
    case 'milliseconds':
      return parseInteger(raw, source, type.min, type.max, 'a whole number of milliseconds');
    case 'duration':
      return parseDuration(raw, source, type.max);
    case 'amount':
      return parseAmount(raw, source, type.max);
    case 'port':
      return parsePort(raw, source);
    case 'url':
      return parseUrl(raw, source);
    case 'enum':
      return parseEnum(raw, source, type.values);
    case 'host':
      return parseHost(raw, source);
    case 'path':
      return parsePath(raw, source, paths.baseDir, paths.home);
    case 'string':
      return parseString(raw, source);
    case 'offset':
      return parseSignedDuration(raw, source);
  }
}
