import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { didYouMean } from '../suggest.js';
import { plainValue, yamlLocator, yamlPackage } from './yaml-location.js';
import { type DeliveryMethodEntry, parseDeliveryMethods } from './delivery-methods.js';
import { parseNotifySection, type NotifySection } from './notify-config.js';
import { parseRoutes, type Route } from './routes.js';
import { PROFILE_SETTINGS, SETTINGS, type SettingName } from './settings.js';

/**
 * One named profile of the config file. Its keys are the settings' names in the table of
 * settings.ts (HTORDER_BASE_URL → baseUrl); values are checked by the settings' parsers when
 * read. Unknown keys are an error, because a misspelt key would otherwise silently fall back
 * to the environment.
 */
export type ProfileValues = { [K in SettingName]?: string | number | boolean };

export interface ConfigFile {
  path: string;
  profiles: Record<string, ProfileValues>;
  /**
   * Settings at the top of the file, beside `profiles`: the one-account way (and what every
   * profile shares). Empty when the file has none.
   */
  settings: ProfileValues;
  /** The `routes` section (watch), when the file has one. */
  routes?: Route[];
  /** The `notify` section: webhooks told of failures (notify-config.ts). */
  notify?: NotifySection;
  /** The `deliveryMethods` table: shop method → delivery option, for every profile (delivery-methods.ts). */
  deliveryMethods?: Map<string, DeliveryMethodEntry>;
  /** Each profile's own `deliveryMethods`, over the file's. */
  profileDeliveryMethods?: Record<string, Map<string, DeliveryMethodEntry>>;
}

const SECTION_KEYS = ['profiles', 'routes', 'notify', 'deliveryMethods'];

/** The profile a command uses when none is selected (as the AWS CLI's `default`). */
export const DEFAULT_PROFILE = 'default';

/** Parses config-file text; `path` is for messages. Pure: no I/O. */
export function parseConfigFile(text: string, path: string): ConfigFile {
  const { LineCounter, parseDocument } = yamlPackage();
  // The document keeps each node's position, so the routes' problems can be located; its
  // warnings are never logged: they quote the line, which may hold the secret.
  const lineCounter = new LineCounter();
  const parsed = parseDocument(text, { lineCounter });
  const syntax = parsed.errors[0];
  if (syntax) throw new UsageError(`config file ${path}: not valid YAML: ${yamlProblem(syntax)}`);
  const plain = plainValue(parsed);
  if ('problem' in plain)
    throw new UsageError(`config file ${yamlLocator(path, lineCounter)(plain.at)}: ${plain.problem}`);
  const doc = plain.value;
  if (doc === null || doc === undefined) return { path, profiles: {}, settings: {} };
  // `config file FILE:LINE:COL` of key `key` of the mapping at `keys`: a wrong key or value is
  // found in the file by its place, as the sections' problems are.
  const locate = yamlLocator(path, lineCounter);
  const keyAt = (keys: string[], key: string): string =>
    `config file ${locate(pairKey(parsed.getIn(keys, true), key))}`;
  if (!isRecord(doc)) throw new UsageError(`config file ${path}: expected a mapping with a "profiles" key`);
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    if (SECTION_KEYS.includes(key)) continue;
    if (!(PROFILE_SETTINGS as readonly string[]).includes(key))
      throw new UsageError(
        `${keyAt([], key)}: unknown top-level key "${key}"${didYouMean(key, [...SECTION_KEYS, ...PROFILE_SETTINGS])} ` +
          `(expected ${SECTION_KEYS.map((k) => `"${k}"`).join(', ')} or a setting, as a profile takes)`,
      );
    settings[key] = value;
  }
  checkValues(settings, (key) => `${keyAt([], key)}: top-level setting`);
  const notify = 'notify' in doc ? parseNotifySection(parsed.get('notify', true), { path, lineCounter }) : undefined;
  const methodsAt = (keys: string[], field: string) =>
    parseDeliveryMethods(parsed.getIn(keys, true), { path, lineCounter }, field);
  const deliveryMethods = 'deliveryMethods' in doc ? methodsAt(['deliveryMethods'], 'deliveryMethods') : undefined;
  const profileDeliveryMethods: Record<string, Map<string, DeliveryMethodEntry>> = {};
  const rawProfiles = doc.profiles ?? {};
  if (!isRecord(rawProfiles))
    throw new UsageError(`config file ${path}: "profiles" must be a mapping of name → settings`);
  const profiles: Record<string, ProfileValues> = {};
  for (const [name, raw] of Object.entries(rawProfiles)) {
    if (!isRecord(raw)) throw new UsageError(`config file ${path}: profile "${name}" must be a mapping`);
    if ('deliveryMethods' in raw) {
      const field = `profiles.${name}.deliveryMethods`;
      profileDeliveryMethods[name] = methodsAt(['profiles', name, 'deliveryMethods'], field);
      delete raw.deliveryMethods;
    }
    for (const key of Object.keys(raw)) {
      if (!(PROFILE_SETTINGS as readonly string[]).includes(key)) {
        const known = [...PROFILE_SETTINGS, 'deliveryMethods'];
        throw new UsageError(
          `${keyAt(['profiles', name], key)}: profile "${name}": unknown key "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`,
        );
      }
    }
    checkValues(raw, (key) => `${keyAt(['profiles', name], key)}: profile "${name}":`);
    profiles[name] = raw as ProfileValues;
  }
  const routes =
    doc.routes === undefined || doc.routes === null
      ? undefined
      : parseRoutes(parsed.get('routes', true), { path, lineCounter, profiles: Object.keys(profiles) });
  return {
    path,
    profiles,
    settings: settings as ProfileValues,
    notify,
    routes,
    deliveryMethods,
    profileDeliveryMethods,
  };
}

const NUMERIC_KINDS = ['integer', 'milliseconds', 'duration', 'offset', 'port', 'amount'];

/**
 * Each value a YAML scalar of its setting's kind (`where(key)` prefixes the message, with the
 * key's place); the value itself is checked by the setting's parser.
 */
function checkValues(values: Record<string, unknown>, where: (key: string) => string): void {
  for (const [key, value] of Object.entries(values)) {
    const kind = SETTINGS[key as SettingName].type.kind;
    const ok =
      typeof value === 'string' ||
      (typeof value === 'number' && NUMERIC_KINDS.includes(kind)) ||
      (typeof value === 'boolean' && kind === 'boolean');
    if (ok) continue;
    const got = Array.isArray(value)
      ? 'a list'
      : value === null
        ? 'no value'
        : typeof value === 'object'
          ? 'a mapping'
          : `a ${typeof value}`;
    const takes = kind === 'boolean' ? 'true or false' : NUMERIC_KINDS.includes(kind) ? 'a number' : 'text';
    throw new UsageError(`${where(key)} "${key}" has the wrong type (${got}); it takes ${takes}`);
  }
}

/** The key node of `key` in a parsed mapping, for its place; undefined when there is none. */
function pairKey(map: unknown, key: string): unknown {
  const { isMap, isScalar } = yamlPackage();
  return isMap(map) ? map.items.find((pair) => isScalar(pair.key) && pair.key.value === key)?.key : undefined;
}

/**
 * Reads and parses a config file; undefined when `optional` and the file does not exist.
 * `namedBy`: the flag or variable that named it, said when it cannot be read.
 */
export function loadConfigFile(path: string, optional = false, namedBy?: string): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (optional && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const by = namedBy === undefined ? '' : ` (${namedBy})`;
    throw new UsageError(
      `config file ${path}${by}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseConfigFile(text, path);
}

/**
 * The yaml library's message without its code frame: the frame repeats the offending line,
 * which may be a `clientSecret:` line. Only the problem and its line and column are kept.
 */
function yamlProblem(err: unknown): string {
  const first = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
  return first.replace(/:\s*$/, '');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
