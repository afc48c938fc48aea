import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { UsageError } from '../errors.js';

/**
 * One named profile of the config file. Keys mirror the environment variables
 * (HTORDER_BASE_URL → baseUrl). Unknown keys are an error, because a misspelt key would
 * otherwise silently fall back to the environment.
 */
export interface ProfileValues {
  baseUrl?: string;
  authUrl?: string;
  realm?: string;
  clientId?: string;
  clientSecret?: string;
  clientSecretFile?: string;
  statusUrl?: string;
  stateDir?: string;
  concurrency?: number | string;
  appName?: string;
  allowInsecure?: boolean;
  connectTimeoutMs?: number | string;
  requestTimeoutMs?: number | string;
}

export interface ConfigFile {
  path: string;
  profiles: Record<string, ProfileValues>;
}

export const PROFILE_KEYS: readonly (keyof ProfileValues)[] = [
  'baseUrl', 'authUrl', 'realm', 'clientId', 'clientSecret', 'clientSecretFile', 'statusUrl',
  'stateDir', 'concurrency', 'appName', 'allowInsecure', 'connectTimeoutMs', 'requestTimeoutMs',
];

/** Parses config-file text; `path` is for messages. Pure: no I/O. */
export function parseConfigFile(text: string, path: string): ConfigFile {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new UsageError(`config file ${path}: not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return { path, profiles: {} };
  if (!isRecord(doc)) throw new UsageError(`config file ${path}: expected a mapping with a "profiles" key`);
  for (const key of Object.keys(doc)) {
    if (key !== 'profiles') throw new UsageError(`config file ${path}: unknown top-level key "${key}" (expected "profiles")`);
  }
  const rawProfiles = doc.profiles ?? {};
  if (!isRecord(rawProfiles)) throw new UsageError(`config file ${path}: "profiles" must be a mapping of name → settings`);
  const profiles: Record<string, ProfileValues> = {};
  for (const [name, raw] of Object.entries(rawProfiles)) {
    if (!isRecord(raw)) throw new UsageError(`config file ${path}: profile "${name}" must be a mapping`);
    for (const [key, value] of Object.entries(raw)) {
      if (!(PROFILE_KEYS as readonly string[]).includes(key)) {
        throw new UsageError(`config file ${path}: profile "${name}": unknown key "${key}" (known: ${PROFILE_KEYS.join(', ')})`);
      }
      const ok =
        key === 'allowInsecure'
          ? typeof value === 'boolean'
          : typeof value === 'string' || (typeof value === 'number' && /Ms$|^concurrency$/.test(key));
      if (!ok) throw new UsageError(`config file ${path}: profile "${name}": "${key}" has the wrong type`);
    }
    profiles[name] = raw as ProfileValues;
  }
  return { path, profiles };
}

/** Reads and parses a config file; undefined when `optional` and the file does not exist. */
export function loadConfigFile(path: string, optional = false): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (optional && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`config file ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parseConfigFile(text, path);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
