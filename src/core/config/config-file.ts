import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { yamlPackage } from './yaml-location.js';
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
  /** The `routes` section (watch), when the file has one. */
  routes?: Route[];
  /** The `notify` section: webhooks told of failures (notify-config.ts). */
  notify?: NotifySection;
  /** The `deliveryMethods` table: shop method → delivery option, for every profile (delivery-methods.ts). */
  deliveryMethods?: Map<string, DeliveryMethodEntry>;
  /** Each profile's own `deliveryMethods`, over the file's. */
  profileDeliveryMethods?: Record<string, Map<string, DeliveryMethodEntry>>;
}

const TOP_LEVEL_KEYS = ['profiles', 'routes', 'notify', 'deliveryMethods'];

/** Parses config-file text; `path` is for messages. Pure: no I/O. */
export function parseConfigFile(text: string, path: string): ConfigFile {
  const { LineCounter, parseDocument } = yamlPackage();
  // The document keeps each node's position, so the routes' problems can be located; its
  // warnings are never logged: they quote the line, which may hold the secret.
  const lineCounter = new LineCounter();
  const parsed = parseDocument(text, { lineCounter });
  const syntax = parsed.errors[0];
  if (syntax) throw new UsageError(`config file ${path}: not valid YAML: ${yamlProblem(syntax)}`);
  const doc: unknown = parsed.toJS();
  if (doc === null || doc === undefined) return { path, profiles: {} };
  if (!isRecord(doc)) throw new UsageError(`config file ${path}: expected a mapping with a "profiles" key`);
  for (const key of Object.keys(doc)) {
    if (!TOP_LEVEL_KEYS.includes(key))
      throw new UsageError(
        `config file ${path}: unknown top-level key "${key}" (expected ${TOP_LEVEL_KEYS.map((k) => `"${k}"`).join(' or ')})`,
      );
  }
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
    for (const [key, value] of Object.entries(raw)) {
      if (!(PROFILE_SETTINGS as readonly string[]).includes(key)) {
        throw new UsageError(
          `config file ${path}: profile "${name}": unknown key "${key}" (known: ${[...PROFILE_SETTINGS, 'deliveryMethods'].join(', ')})`,
        );
      }
      // A YAML scalar of the setting's kind; its value is checked by the setting's parser.
      const kind = SETTINGS[key as SettingName].type.kind;
      const ok =
        typeof value === 'string' ||
        (typeof value === 'number' && ['integer', 'milliseconds', 'duration', 'port', 'amount'].includes(kind)) ||
        (typeof value === 'boolean' && kind === 'boolean');
      if (!ok) throw new UsageError(`config file ${path}: profile "${name}": "${key}" has the wrong type`);
    }
    profiles[name] = raw as ProfileValues;
  }
  const routes =
    doc.routes === undefined || doc.routes === null
      ? undefined
      : parseRoutes(parsed.get('routes', true), { path, lineCounter, profiles: Object.keys(profiles) });
  return { path, profiles, notify, routes, deliveryMethods, profileDeliveryMethods };
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
