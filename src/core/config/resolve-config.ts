import { readFileSync, statSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { defaultStateDir, type ApiConfig } from './api-config.js';
import { parsePath } from './parse-setting.js';
import {
  envName,
  resolveSettings,
  type ResolveSettingsInput,
  type Settings,
  type SettingFlags,
} from './resolve-settings.js';
import { setting, type SettingName } from './settings.js';
import { checkTransportSecurity } from './url-security.js';

/** Command-line flags (or a program's values in their place), by setting name. All optional. */
export type ConfigFlags = SettingFlags;

export type ResolveConfigInput = Pick<ResolveSettingsInput, 'env' | 'flags' | 'cwd' | 'home'>;

/**
 * Resolves the configuration of one account from flags, the selected profile, the
 * environment and the defaults (precedence: resolve-settings.ts; docs/configuration.md).
 * Missing or contradictory settings throw UsageError (exit 2) naming the variable.
 * Reads files (config file, secret file) but has no other side effects.
 */
export function resolveConfig(input: ResolveConfigInput): ApiConfig {
  return apiConfigFrom(resolveSettings(input));
}

/**
 * The account's configuration out of resolved settings. The secret and the secret file count
 * as one setting: the highest layer that has either supplies it, and a layer that has both is
 * contradictory.
 */
export function apiConfigFrom(settings: Settings, opts: { missingHint?: string } = {}): ApiConfig {
  // Every missing setting in one message: a new user learns them all from one run.
  const missing: string[] = [];
  const required = <K extends 'baseUrl' | 'authUrl' | 'realm' | 'clientId'>(name: K): string => {
    const value = settings.get(name);
    if (value === undefined) missing.push(describeMissing(name, settings.profile));
    return value ?? '';
  };
  const baseUrl = required('baseUrl');
  const authUrl = required('authUrl');
  const realm = required('realm');
  const clientId = required('clientId');
  const clientSecret = resolveSecret(settings, missing);
  if (missing.length > 0) throw new UsageError(missingMessage(missing, opts.missingHint));
  const config: ApiConfig = {
    baseUrl,
    authUrl,
    realm,
    clientId,
    clientSecret,
    statusUrl: settings.get('statusUrl') ?? null,
    stateDir: settings.get('stateDir') ?? defaultStateDir(settings.env, settings.home),
    concurrency: settings.get('concurrency'),
    appName: settings.get('appName'),
    timeouts: {
      connectMs: settings.get('connectTimeoutMs'),
      headersMs: settings.get('requestTimeoutMs'),
      bodyMs: settings.get('requestTimeoutMs'),
      deadlineMs: settings.get('requestDeadlineMs'),
    },
    maxResponseBytes: settings.get('maxResponseBytes'),
    allowInsecure: settings.get('allowInsecure'),
    profile: settings.profile,
  };
  checkTransportSecurity(config);
  return config;
}

/**
 * `missing configuration: X is not set (…)` for one; for several, one line each. `hint`: what
 * else the command offers (its --sandbox), on a line of its own.
 */
function missingMessage(missing: readonly string[], hint: string | undefined): string {
  const head =
    missing.length === 1
      ? `missing configuration: ${missing[0]}`
      : `missing configuration (${missing.length} settings):\n${missing.map((m) => `  ${m}`).join('\n')}`;
  return hint ? `${head}\n${hint}` : head;
}

/** The secret, or '' with what is missing added to `missing`. */
function resolveSecret(settings: Settings, missing: string[]): string {
  for (const layer of settings.layers()) {
    if (layer.layer === 'default') break;
    const secret = layer.values.clientSecret;
    const file = layer.values.clientSecretFile;
    if (secret !== undefined && file !== undefined) {
      throw new UsageError(
        `contradictory configuration: both ${layer.nameOf('clientSecret')} and ` +
          `${layer.nameOf('clientSecretFile')} are set; use one`,
      );
    }
    if (secret !== undefined) {
      const value = String(secret).trim();
      // The secret's value is never repeated in a message, only where it came from.
      if (value === '') throw new UsageError(`${layer.nameOf('clientSecret')} must not be empty`);
      return value;
    }
    if (file !== undefined) {
      const source = layer.nameOf('clientSecretFile');
      const path = parsePath(file, source, layer.baseDir, settings.home);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (err) {
        throw new UsageError(`${source}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
      const value = text.trim();
      if (value === '') throw new UsageError(`${source}: ${path} is empty`);
      const mode = statSync(path, { throwIfNoEntry: false })?.mode;
      if (mode !== undefined && (mode & 0o004) !== 0) {
        settings.warnings.push(`secret file ${path} (${source}) can be read by other users (chmod go-r)`);
      }
      return value;
    }
  }
  missing.push(
    `${envName('clientSecret')} or ${envName('clientSecretFile')} is not set${
      settings.profile ? ` (nor clientSecret/clientSecretFile in profile "${settings.profile}")` : ''
    }`,
  );
  return '';
}

/** `HTORDER_CLIENT_ID is not set (or use --client-id or clientId in profile "nz")`. */
export function describeMissing(name: SettingName, profileName: string | null): string {
  const s = setting(name);
  const inProfile = profileName && s.profile !== false ? `${name} in profile "${profileName}"` : null;
  const alternatives = [s.flag, inProfile].filter(Boolean);
  return `${envName(name)} is not set${alternatives.length ? ` (or use ${alternatives.join(' or ')})` : ''}`;
}
