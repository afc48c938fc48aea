import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import {
  DEFAULT_APP_NAME, DEFAULT_CONCURRENCY, DEFAULT_STATE_DIR, DEFAULT_TIMEOUTS, type ApiConfig,
} from './api-config.js';
import { loadConfigFile, type ConfigFile, type ProfileValues } from './config-file.js';
import { checkTransportSecurity } from './url-security.js';

/** Command-line flags, already parsed (see config-flags.ts). All optional. */
export interface ConfigFlags {
  profile?: string;
  config?: string;
  baseUrl?: string;
  authUrl?: string;
  realm?: string;
  clientId?: string;
  clientSecretFile?: string;
  statusUrl?: string;
  stateDir?: string;
  concurrency?: string | number;
  appName?: string;
  allowInsecure?: boolean;
  connectTimeoutMs?: string | number;
  requestTimeoutMs?: string | number;
}

export interface ResolveConfigInput {
  env: Record<string, string | undefined>;
  flags?: ConfigFlags;
  /** Relative paths (state dir, secret file, ./htorder.config.yaml) resolve against this. */
  cwd: string;
  /** For `~/.config/htorder/config.yaml` and `~/` in profile paths; default os.homedir(). */
  home?: string;
}

type Field = keyof ProfileValues;

/** How each field is named in each layer, so a message can name what the user should set. */
const NAMES: Record<Field, { env: string; flag: string | null }> = {
  baseUrl: { env: 'HTORDER_BASE_URL', flag: '--base-url' },
  authUrl: { env: 'HTORDER_AUTH_URL', flag: '--auth-url' },
  realm: { env: 'HTORDER_REALM', flag: '--realm' },
  clientId: { env: 'HTORDER_CLIENT_ID', flag: '--client-id' },
  // No --client-secret flag: a secret on the command line is visible to every user via ps.
  clientSecret: { env: 'HTORDER_CLIENT_SECRET', flag: null },
  clientSecretFile: { env: 'HTORDER_CLIENT_SECRET_FILE', flag: '--client-secret-file' },
  statusUrl: { env: 'HTORDER_STATUS_URL', flag: '--status-url' },
  stateDir: { env: 'HTORDER_STATE_DIR', flag: '--state-dir' },
  concurrency: { env: 'HTORDER_CONCURRENCY', flag: '--concurrency' },
  appName: { env: 'HTORDER_APP_NAME', flag: '--app-name' },
  allowInsecure: { env: 'HTORDER_ALLOW_INSECURE', flag: '--allow-insecure' },
  connectTimeoutMs: { env: 'HTORDER_CONNECT_TIMEOUT_MS', flag: '--connect-timeout-ms' },
  requestTimeoutMs: { env: 'HTORDER_REQUEST_TIMEOUT_MS', flag: '--request-timeout-ms' },
};

interface Layer {
  values: Partial<Record<Field, string | number | boolean>>;
  /** The name of `field` in this layer, for messages. */
  nameOf(field: Field): string;
  /** Relative paths given in this layer resolve against this directory. */
  baseDir: string;
}

interface Picked<T> {
  value: T;
  source: string;
  layer: Layer;
}

/**
 * Resolves the configuration of one account. Precedence, highest first:
 *   1. flags (`--base-url` …)
 *   2. the selected profile of the config file (`--profile`, else HTORDER_PROFILE)
 *   3. environment variables (HTORDER_*)
 *   4. built-in defaults (state dir `.htorder`, concurrency 8, app name `API`).
 * A profile outranks the environment because choosing one is an explicit act, while the
 * environment is ambient. The secret and the secret file count as one setting: the highest
 * layer that has either supplies it, and a layer that has both is contradictory.
 * Missing or contradictory settings throw UsageError (exit 2) naming the variable.
 * Reads files (config file, secret file) but has no other side effects.
 */
export function resolveConfig(input: ResolveConfigInput): ApiConfig {
  const env = input.env;
  const flags = input.flags ?? {};
  const home = input.home ?? homedir();
  const cwd = input.cwd;

  const profileName = nonEmpty(flags.profile) ?? nonEmpty(env.HTORDER_PROFILE) ?? null;
  const file = findConfigFile(flags, env, cwd, home);
  let profile: ProfileValues | undefined;
  if (profileName !== null) {
    if (!file) {
      throw new UsageError(
        `profile "${profileName}" not found: no config file (set HTORDER_CONFIG or --config, or create ./htorder.config.yaml or ~/.config/htorder/config.yaml)`,
      );
    }
    profile = file.profiles[profileName];
    if (!profile) {
      const known = Object.keys(file.profiles);
      throw new UsageError(
        `profile "${profileName}" not found in ${file.path} (known profiles: ${known.length ? known.join(', ') : 'none'})`,
      );
    }
  }

  const layers: Layer[] = [];
  layers.push({
    values: stripUndefined(flags as Record<string, unknown>),
    nameOf: (f) => NAMES[f].flag ?? NAMES[f].env,
    baseDir: cwd,
  });
  if (profile && file) {
    layers.push({
      values: stripUndefined(profile as Record<string, unknown>),
      nameOf: (f) => `${f} of profile "${profileName}" in ${file.path}`,
      baseDir: dirname(file.path),
    });
  }
  const envValues: Layer['values'] = {};
  for (const [field, names] of Object.entries(NAMES) as [Field, (typeof NAMES)[Field]][]) {
    const v = nonEmpty(env[names.env]);
    if (v !== undefined) envValues[field] = v;
  }
  layers.push({ values: envValues, nameOf: (f) => NAMES[f].env, baseDir: cwd });

  const pick = (field: Field): Picked<string | number | boolean> | undefined => {
    for (const layer of layers) {
      const v = layer.values[field];
      if (v !== undefined && v !== '') return { value: v, source: layer.nameOf(field), layer };
    }
    return undefined;
  };
  const required = (field: Field): string => {
    const p = pick(field);
    if (p === undefined) throw new UsageError(`missing configuration: ${describe(field, profileName)}`);
    return String(p.value).trim();
  };

  const baseUrl = normaliseUrl(required('baseUrl'), pick('baseUrl')!.source);
  const authUrl = normaliseUrl(required('authUrl'), pick('authUrl')!.source);
  const realm = required('realm');
  const clientId = required('clientId');
  const clientSecret = resolveSecret(layers, profileName, home);
  const statusPick = pick('statusUrl');
  const statusUrl = statusPick ? normaliseUrl(String(statusPick.value), statusPick.source) : null;

  const statePick = pick('stateDir');
  const stateDir = statePick
    ? resolvePath(String(statePick.value), statePick.layer.baseDir, home)
    : resolve(cwd, DEFAULT_STATE_DIR);

  const concurrency = positiveInt(pick('concurrency'), DEFAULT_CONCURRENCY, 256);
  const appName = String(pick('appName')?.value ?? DEFAULT_APP_NAME).trim();
  if (appName === '') throw new UsageError(`${pick('appName')!.source} must not be empty`);
  const connectMs = positiveInt(pick('connectTimeoutMs'), DEFAULT_TIMEOUTS.connectMs, 3_600_000);
  const requestMs = positiveInt(pick('requestTimeoutMs'), DEFAULT_TIMEOUTS.headersMs, 3_600_000);
  const allowInsecure = booleanSetting(pick('allowInsecure'));

  const config: ApiConfig = {
    baseUrl, authUrl, realm, clientId, clientSecret, statusUrl, stateDir, concurrency, appName,
    timeouts: { connectMs, headersMs: requestMs, bodyMs: requestMs },
    allowInsecure,
    profile: profileName,
  };
  checkTransportSecurity(config);
  return config;
}

/** Config file location: --config, HTORDER_CONFIG, ./htorder.config.yaml, then $XDG_CONFIG_HOME or ~/.config/htorder/config.yaml. */
export function findConfigFile(
  flags: ConfigFlags,
  env: Record<string, string | undefined>,
  cwd: string,
  home: string,
): ConfigFile | undefined {
  const explicit = nonEmpty(flags.config) ?? nonEmpty(env.HTORDER_CONFIG);
  if (explicit !== undefined) return loadConfigFile(resolvePath(explicit, cwd, home));
  const xdg = nonEmpty(env.XDG_CONFIG_HOME) ?? join(home, '.config');
  for (const candidate of [join(cwd, 'htorder.config.yaml'), join(xdg, 'htorder', 'config.yaml')]) {
    const file = loadConfigFile(candidate, true);
    if (file) return file;
  }
  return undefined;
}

function resolveSecret(layers: Layer[], profileName: string | null, home: string): string {
  for (const layer of layers) {
    const secret = layer.values.clientSecret;
    const file = layer.values.clientSecretFile;
    const hasSecret = secret !== undefined && secret !== '';
    const hasFile = file !== undefined && file !== '';
    if (hasSecret && hasFile) {
      throw new UsageError(
        `contradictory configuration: both ${layer.nameOf('clientSecret')} and ${layer.nameOf('clientSecretFile')} are set; use one`,
      );
    }
    if (hasSecret) return String(secret).trim();
    if (hasFile) {
      const path = resolvePath(String(file), layer.baseDir, home);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (err) {
        throw new UsageError(
          `${layer.nameOf('clientSecretFile')}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
      const value = text.trim();
      if (value === '') throw new UsageError(`${layer.nameOf('clientSecretFile')}: ${path} is empty`);
      return value;
    }
  }
  throw new UsageError(
    `missing configuration: HTORDER_CLIENT_SECRET or HTORDER_CLIENT_SECRET_FILE is not set${
      profileName ? ` (nor clientSecret/clientSecretFile in profile "${profileName}")` : ''
    }`,
  );
}

function describe(field: Field, profileName: string | null): string {
  const n = NAMES[field];
  const alternatives = [n.flag, profileName ? `${field} in profile "${profileName}"` : null].filter(Boolean);
  return `${n.env} is not set${alternatives.length ? ` (or use ${alternatives.join(' or ')})` : ''}`;
}

function normaliseUrl(value: string, source: string): string {
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

function positiveInt(p: Picked<string | number | boolean> | undefined, fallback: number, max: number): number {
  if (p === undefined) return fallback;
  const text = String(p.value).trim();
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new UsageError(`${p.source} must be a whole number from 1 to ${max}, got "${text}"`);
  }
  return Number(text);
}

function booleanSetting(p: Picked<string | number | boolean> | undefined): boolean {
  if (p === undefined) return false;
  if (typeof p.value === 'boolean') return p.value;
  const text = String(p.value).trim().toLowerCase();
  if (['1', 'true', 'yes'].includes(text)) return true;
  if (['0', 'false', 'no', ''].includes(text)) return false;
  throw new UsageError(`${p.source} must be 1 or 0, got "${p.value}"`);
}

function resolvePath(path: string, baseDir: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

function stripUndefined(o: Record<string, unknown>): Layer['values'] {
  const out: Layer['values'] = {};
  for (const [k, v] of Object.entries(o)) {
    if (k in NAMES && v !== undefined && v !== null) out[k as Field] = v as string | number | boolean;
  }
  return out;
}
