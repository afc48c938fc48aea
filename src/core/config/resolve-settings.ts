import { lstatSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { plantedName, writableByOthers } from '../file-owner.js';
import { ownershipProblem } from './file-owner.js';
import { DEFAULT_PROFILE, loadConfigFile, type ConfigFile, type ProfileValues } from './config-file.js';
import { parseBoolean, parsePath, parseSettingValue, type ParsedValue } from './parse-setting.js';
import {
  SETTINGS,
  SETTING_NAMES,
  setting,
  type DefaultedSetting,
  type SettingName,
  type SettingValue,
} from './settings.js';

/** Raw values given on the command line (or by a program calling in), by setting name. */
export type SettingFlags = { [K in SettingName]?: string | number | boolean };

export interface ResolveSettingsInput {
  env: Record<string, string | undefined>;
  flags?: SettingFlags;
  /** Relative paths (state dir, secret file, ./htorder.config.yaml) resolve against this. */
  cwd: string;
  /** For `~/.config/htorder/config.yaml` and `~/` in paths; default os.homedir(). */
  home?: string;
  /** Defaults of one command that differ from the table's (watch logs at `info`). */
  defaults?: SettingFlags;
  /**
   * Settings something else supplies (`--sandbox` brings its own account): no profile, config
   * file or environment variable sets them, so none is read or checked.
   */
  suppliedElsewhere?: readonly SettingName[];
  /** What selected the profile when not the user (a watch route), said after its values' source. */
  profileChosenBy?: string;
}

/**
 * The layers, highest first: a flag; the profile the user selected; an environment variable;
 * the config file's own (its `default` profile when none is selected, then its top-level
 * settings); the built-in default.
 */
export type Layer = 'flag' | 'profile' | 'env' | 'file' | 'default';

/** One layer of values, by setting name, and how it names a setting in messages. */
export interface SettingLayer {
  layer: Layer;
  values: SettingFlags;
  nameOf(name: SettingName): string;
  /** Relative paths given in this layer resolve against this folder (a profile's: its file's). */
  baseDir: string;
}

/** A raw value and where it came from. */
export interface RawSetting extends Pick<SettingLayer, 'layer' | 'baseDir'> {
  value: string | number | boolean;
  /** `--concurrency`, `HTORDER_CONCURRENCY`, `concurrency of profile "nz" in F`, `the default`. */
  source: string;
}

/**
 * The resolved settings of one command. Precedence, highest first:
 *   1. flags (`--base-url` …)
 *   2. the selected profile of the config file (`--profile`, else HTORDER_PROFILE)
 *   3. environment variables (HTORDER_*)
 *   4. the config file's own settings: its `default` profile when no profile is selected, then
 *      its top-level settings (the one-account way, docs/configuration.md)
 *   5. built-in defaults (the table in settings.ts).
 * A selected profile outranks the environment because choosing one is an explicit act, while
 * the environment is ambient; what the file says for everyone (its default profile and top
 * level) is ambient too, and yields to the environment, as the AWS CLI's does. Values are
 * parsed when read; checkAll() reads them all, so a command can stop on any bad one at its start.
 */
export interface Settings {
  /** The value, or undefined when no layer sets it and it has no default. */
  get<K extends SettingName>(name: K): K extends DefaultedSetting ? SettingValue<K> : SettingValue<K> | undefined;
  /** The value only when a flag, a profile, the file or the environment set it (not the default). */
  explicit<K extends SettingName>(name: K): SettingValue<K> | undefined;
  /** The raw value and its layer, or undefined. */
  raw(name: SettingName): RawSetting | undefined;
  /** The layers in precedence order, for settings that span two names (the secret and its file). */
  layers(): readonly SettingLayer[];
  /**
   * Parses the value in force of every setting of the table, whether this command reads it or
   * not: the first bad one throws UsageError (exit 2) naming the setting and its source.
   */
  checkAll(): void;
  /** Name of the profile in use (selected, or the file's `default`), or null. */
  readonly profile: string | null;
  readonly home: string;
  readonly env: Record<string, string | undefined>;
  /**
   * Things worth a warning that do not stop the command (a secret file readable by others);
   * the caller logs them once it has a logger. Never holds a secret's value.
   */
  readonly warnings: string[];
  /** The config file found, for its sections other than profiles (`notify`, `routes`). */
  readonly configFile?: ConfigFile;
}

export function resolveSettings(input: ResolveSettingsInput): Settings {
  const env = input.env;
  const flags = definedOnly(input.flags);
  const home = input.home ?? homedir();
  const cwd = input.cwd;
  const warnings: string[] = [];
  const selected = text(flags.profile) ?? text(env.HTORDER_PROFILE) ?? null;
  const selectedBy =
    input.profileChosenBy ?? (text(flags.profile) !== undefined ? flagName('profile') : envName('profile'));
  // Read (and so checked) even when no profile is selected, as an explicit --config must exist,
  // and for its other sections (notify, routes, the top-level settings).
  const found = locateConfigFile(flags, env, cwd, home, warnings);
  const elsewhere = new Set(input.suppliedElsewhere ?? []);
  const own = (values: SettingFlags): SettingFlags => layerOf((n) => (elsewhere.has(n) ? undefined : values[n]));
  const layers: SettingLayer[] = [{ layer: 'flag', values: flags, nameOf: flagName, baseDir: cwd }];
  if (selected !== null && !found) {
    throw new UsageError(
      `profile "${selected}" (${selectedBy}) not found: no config file (set HTORDER_CONFIG or --config, ` +
        'or create ./htorder.config.yaml or ~/.config/htorder/config.yaml)',
    );
  }
  const chosenBy = input.profileChosenBy ? ` (${input.profileChosenBy})` : '';
  if (selected !== null && found) {
    const values = selectedProfile(selected, selectedBy, found, env);
    layers.push(profileLayer('profile', selected, values, found, chosenBy, own));
  }
  layers.push({ layer: 'env', values: own(layerOf((n) => text(env[SETTINGS[n].env]))), nameOf: envName, baseDir: cwd });
  const implicit = selected === null && found?.file.profiles[DEFAULT_PROFILE] !== undefined;
  if (found && implicit) {
    const values = found.file.profiles[DEFAULT_PROFILE] ?? {};
    if (found.local) checkLocalValues(found, 'implicit', values, env);
    layers.push(profileLayer('file', DEFAULT_PROFILE, values, found, '', own));
  }
  if (found && Object.keys(found.file.settings).length > 0) {
    if (found.local) checkLocalValues(found, 'implicit', found.file.settings, env);
    layers.push({
      layer: 'file',
      values: own(definedOnly(found.file.settings)),
      nameOf: (n) => `${n} in config file ${found.file.path}`,
      baseDir: dirname(found.file.path),
    });
  }
  const defaults = layerOf((n) => input.defaults?.[n] ?? setting(n).default);
  layers.push({ layer: 'default', values: defaults, nameOf: (n) => `the default of ${n}`, baseDir: cwd });
  const raw = (name: SettingName): RawSetting | undefined => {
    for (const l of layers) {
      const value = l.values[name];
      if (value !== undefined) return { value, layer: l.layer, source: l.nameOf(name), baseDir: l.baseDir };
    }
    return undefined;
  };
  const parsed = new Map<SettingName, ParsedValue | undefined>();
  const get = (name: SettingName): ParsedValue | undefined => {
    if (!parsed.has(name)) {
      const r = raw(name);
      const paths = { baseDir: r?.baseDir ?? cwd, home };
      parsed.set(name, r === undefined ? undefined : parseSettingValue(SETTINGS[name].type, r.value, r.source, paths));
    }
    return parsed.get(name);
  };
  return {
    get: get as Settings['get'],
    explicit: (name) =>
      (raw(name)?.layer === 'default' ? undefined : get(name)) as SettingValue<typeof name> | undefined,
    raw,
    layers: () => layers,
    checkAll: () => {
      for (const name of SETTING_NAMES) get(name);
    },
    profile: selected ?? (implicit ? DEFAULT_PROFILE : null),
    home,
    env,
    warnings,
    configFile: found?.file,
  };
}

/** A profile's layer: its values (less what is supplied elsewhere), named `KEY of profile "P" in FILE`. */
function profileLayer(
  layer: 'profile' | 'file',
  name: string,
  values: ProfileValues,
  found: FoundConfig,
  chosenBy: string,
  own: (values: SettingFlags) => SettingFlags,
): SettingLayer {
  return {
    layer,
    values: own(definedOnly(values)),
    nameOf: (n) => `${n} of profile "${name}" in ${found.file.path}${chosenBy}`,
    baseDir: dirname(found.file.path),
  };
}

/** The values of the selected profile; a profile the file does not have is an error. */
function selectedProfile(
  name: string,
  selectedBy: string,
  found: FoundConfig,
  env: Record<string, string | undefined>,
): ProfileValues {
  const values = found.file.profiles[name];
  if (!values) {
    const known = Object.keys(found.file.profiles);
    throw new UsageError(
      `profile "${name}" (${selectedBy}) not found in ${found.file.path} ` +
        `(known profiles: ${known.length ? known.join(', ') : 'none'})`,
    );
  }
  if (found.local) checkLocalValues(found, name, values, env);
  return values;
}

/** A layer's values by setting name: `read` answers null, undefined or '' for a setting it leaves alone. */
function layerOf(read: (name: SettingName) => unknown): SettingFlags {
  const values: SettingFlags = {};
  for (const name of SETTING_NAMES) {
    const v = read(name);
    if (v !== null && v !== undefined && v !== '') values[name] = v as string | number | boolean;
  }
  return values;
}

/** The settings of `values` (flags, a profile) that say something. */
function definedOnly(values: Record<string, unknown> = {}): SettingFlags {
  return layerOf((name) => values[name]);
}

/**
 * The config file a command reads (the same search as for profiles), or undefined: watch takes
 * its `routes` from it, also with `--sandbox`, which selects no profile.
 */
export function findConfigFile(
  input: Pick<ResolveSettingsInput, 'env' | 'flags' | 'cwd' | 'home'>,
): ConfigFile | undefined {
  const flags = definedOnly(input.flags);
  return locateConfigFile(flags, input.env, input.cwd, input.home ?? homedir(), [])?.file;
}

/** How a setting is named on the command line, else in the environment, for messages. */
export function flagName(name: SettingName): string {
  return setting(name).flag ?? envName(name);
}

export function envName(name: SettingName): string {
  return SETTINGS[name].env;
}

interface FoundConfig {
  file: ConfigFile;
  /** Found in the working directory, not named by --config/HTORDER_CONFIG. */
  local: boolean;
  /** The user's own config file (XDG), when the working directory's was found first. */
  userPath: string;
}

/**
 * Config file location: --config, HTORDER_CONFIG, ./htorder.config.yaml (when it is the user's
 * own and not writable by others), then $XDG_CONFIG_HOME or ~/.config/htorder/config.yaml. An
 * explicit file must exist.
 */
function locateConfigFile(
  flags: SettingFlags,
  env: Record<string, string | undefined>,
  cwd: string,
  home: string,
  warnings: string[],
): FoundConfig | undefined {
  const fromFlag = text(flags.config);
  const explicit = fromFlag ?? text(env.HTORDER_CONFIG);
  const xdg = text(env.XDG_CONFIG_HOME) ?? join(home, '.config');
  const userPath = join(xdg, 'htorder', 'config.yaml');
  const found = (file: ConfigFile | undefined, local: boolean): FoundConfig | undefined => {
    if (file) warnReadable(file, warnings);
    return file && { file, local, userPath };
  };
  if (explicit !== undefined) {
    const source = fromFlag !== undefined ? flagName('config') : envName('config');
    const path = parsePath(explicit, source, cwd, home);
    // Named, its owner and group are the user's choice (a system config of root's, a container's
    // mounted file, as ssh -F has it); a file every user of the machine may write is nobody's.
    checkNamed(path, source);
    return found(loadConfigFile(path, false, source), false);
  }
  const localPath = join(cwd, 'htorder.config.yaml');
  // A file in the working directory may have been put there by someone else (a shared folder,
  // a checkout, an unpacked archive): as ssh and git do, refuse one that is not the user's own.
  const local = checkOwner(localPath, 'local') ? loadConfigFile(localPath, true) : undefined;
  return local ? found(local, true) : found(loadUserConfig(userPath), false);
}

/**
 * The user's own config file, when there is one: held to the same rule as the working
 * directory's, since a file planted there (by anyone who can write the folder, or moved in by
 * a process of the user's that was tricked) decides where the secret goes just the same.
 */
function loadUserConfig(path: string): ConfigFile | undefined {
  return checkOwner(path, 'user') ? loadConfigFile(path, true) : undefined;
}

/** What a refused config file is, for its message: the working directory's, or the user's own. */
const CONFIG_KINDS = {
  local: 'A config file in the working directory',
  user: 'Your own config file',
} as const;

/**
 * false when there is no file; throws UsageError (exit 2) for one that is neither the user's
 * nor root's (nor its symbolic link), or that group or others may write (ownershipProblem).
 */
function checkOwner(path: string, kind: keyof typeof CONFIG_KINDS): boolean {
  const stats = configStats(path, path);
  if (stats === undefined) return false;
  const why = ownershipProblem(stats.target, stats.link);
  if (why === undefined) return true;
  throw new UsageError(
    `refusing config file ${path}: ${why}. ${CONFIG_KINDS[kind]} can send your secret to another host; ` +
      'remove it, make it yours and private (chown, chmod go-w), or name a file you trust with --config',
  );
}

/**
 * Throws UsageError (exit 2) for a named config file every user of the machine may write, or one
 * another user may have put at that name (plantedName).
 */
function checkNamed(path: string, namedBy: string): void {
  const file = `${path} (${namedBy})`;
  const stats = configStats(path, file);
  if (stats === undefined) return;
  const why = writableByOthers(stats.target.mode) ?? plantedName(stats.link, statSync(dirname(path)));
  if (why === undefined) return;
  throw new UsageError(
    `refusing config file ${file}: ${why}. A config file can send your secret to another host; ` +
      `make it a file other users may not write (chmod o-w), in a folder they may not write, or name another file`,
  );
}

/** The config file's own stat and its name's, or undefined when there is none. */
function configStats(path: string, file: string): { target: Stats; link: Stats } | undefined {
  try {
    return { link: lstatSync(path), target: statSync(path) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`config file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The keys that decide where the secret goes, or which secret (the API's, the ledger database's): a local file may not change them silently. */
const GUARDED_KEYS = [
  'baseUrl',
  'authUrl',
  'statusUrl',
  'allowInsecure',
  'clientSecretFile',
  'clientSecret',
  'ledgerUrl',
  'ledgerPasswordFile',
  'ledgerCaFile',
] as const;

/**
 * A working-directory config may not change the hosts, allowInsecure or secret (file) that the
 * user's own config file gives the same profile (`profileName`), or — for what applies with no
 * profile selected (`implicit`: the top level, the `default` profile) — what the user's own file
 * gives that way, unless trusted explicitly (`--config` naming it, or HTORDER_TRUST_LOCAL_CONFIG=1).
 * A profile, or implicit settings, only the local file has are the project's own and are used as
 * they are (after the ownership check).
 */
function checkLocalValues(
  found: FoundConfig,
  profileName: string | 'implicit',
  local: ProfileValues,
  env: Record<string, string | undefined>,
): void {
  const trust = text(env[envName('trustLocalConfig')]);
  if (trust !== undefined && parseBoolean(trust, envName('trustLocalConfig'))) return;
  const userFile = loadUserConfig(found.userPath);
  const implicit = { ...userFile?.settings, ...userFile?.profiles[DEFAULT_PROFILE] };
  const user = profileName === 'implicit' ? implicit : userFile?.profiles[profileName];
  if (!user || Object.keys(user).length === 0) return;
  const changed = GUARDED_KEYS.filter((k) => local[k] !== undefined && String(local[k]) !== String(user[k]));
  if (changed.length === 0) return;
  const what =
    profileName === 'implicit'
      ? 'settings used with no profile selected (its top level and "default" profile) change'
      : `profile "${profileName}" changes`;
  const theirs = profileName === 'implicit' ? 'those' : 'the same profile';
  throw new UsageError(
    `refusing ${found.file.path}: its ${what} ${changed.join(', ')} of ${theirs} in your ${found.userPath}. ` +
      `If you trust it, name it with --config ${found.file.path} or set ${envName('trustLocalConfig')}=1`,
  );
}

/** A warning for a config file that holds a secret and that others may read. */
function warnReadable(file: ConfigFile, warnings: string[]): void {
  const holdsSecret = [file.settings, ...Object.values(file.profiles)].some((p) => p.clientSecret !== undefined);
  // A webhook URL carries its token (Slack's path, Teams' signature): as secret as the API's.
  const holdsWebhook = (file.notify?.webhooks.length ?? 0) > 0;
  if (!holdsSecret && !holdsWebhook) return;
  const mode = statSync(file.path, { throwIfNoEntry: false })?.mode;
  if (mode !== undefined && (mode & 0o004) !== 0) {
    const what = holdsSecret ? 'a clientSecret' : 'webhook URLs';
    warnings.push(`config file ${file.path} holds ${what} and other users can read it (chmod go-r)`);
  }
}

/** A value that says something: not undefined, not null, not blank text. */
function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const s = String(v);
  return s.trim() === '' ? undefined : s;
}

/** The CSV reader's limits (csvMaxColumns, csvMaxRecordBytes, csvMaxFileBytes), in the shape of its `CsvLimits`. */
export function csvLimitsFrom(settings: Settings): {
  maxColumns: number;
  maxRecordBytes: number;
  maxFileBytes: number;
} {
  return {
    maxColumns: settings.get('csvMaxColumns'),
    maxRecordBytes: settings.get('csvMaxRecordBytes'),
    maxFileBytes: settings.get('csvMaxFileBytes'),
  };
}

/** The guardrails' limits (docs/guardrails.md), each absent when off. */
export function guardLimitsFrom(settings: Settings): {
  maxJobCost?: number;
  maxInputCost?: number;
  maxDailyCost?: number;
  maxLineQuantity?: number;
  duplicateWindowMs: number;
} {
  const optional = (name: 'maxJobCost' | 'maxInputCost' | 'maxDailyCost' | 'maxLineQuantity') => {
    const value = settings.get(name);
    return value === undefined ? {} : { [name]: value };
  };
  return {
    ...optional('maxJobCost'),
    ...optional('maxInputCost'),
    ...optional('maxDailyCost'),
    ...optional('maxLineQuantity'),
    duplicateWindowMs: settings.get('duplicateWindow'),
  };
}
