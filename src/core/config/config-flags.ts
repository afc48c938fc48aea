import { Option, type Command } from 'commander';
import type { SettingFlags } from './resolve-settings.js';
import { SETTING_NAMES, flagAttribute, setting, type SettingName, type SettingType } from './settings.js';

/** What every command that talks to the API accepts (api, plan, run, track, watch), the ledger's place among them. */
export const CONNECTION_SETTINGS: readonly SettingName[] = [
  'profile',
  'config',
  'baseUrl',
  'authUrl',
  'realm',
  'clientId',
  'clientSecretFile',
  'statusUrl',
  'stateDir',
  'ledgerUrl',
  'ledgerPasswordFile',
  'ledgerCaFile',
  'ledgerWaitMs',
  'concurrency',
  'appName',
  'connectTimeoutMs',
  'requestTimeoutMs',
  'allowInsecure',
  'logLevel',
];

/** Notifications' flags for `run` (the webhook URLs themselves have no flag: they are secrets). */
export const RUN_NOTIFY_SETTINGS: readonly SettingName[] = ['notifyFormat', 'notifyOn'];

/** The guardrails' flags for `plan` and `run` (docs/guardrails.md); watch has every flag. */
export const GUARD_SETTINGS: readonly SettingName[] = [
  'maxJobCost',
  'maxInputCost',
  'maxDailyCost',
  'maxLineQuantity',
  'duplicateWindow',
];

/** The artwork settings' flags for `plan`, `run` and `apply` (docs/artwork.md); watch has every flag. */
export const ARTWORK_SETTINGS: readonly SettingName[] = SETTING_NAMES.filter(
  (n) => n.startsWith('artwork') && setting(n).flag !== undefined,
);

/**
 * What `watch` adds: every other flag of the table (the drop location, S3, the health endpoint,
 * the dashboard, the order locks, notifications), in the table's order.
 */
export const WATCH_SETTINGS: readonly SettingName[] = SETTING_NAMES.filter(
  (n) => setting(n).flag !== undefined && !CONNECTION_SETTINGS.includes(n),
);

/** A flag's placeholder in help when its setting names none. */
const PLACEHOLDERS: Partial<Record<SettingType['kind'], string>> = {
  milliseconds: '<ms>',
  url: '<url>',
  port: '<port>',
  host: '<host>',
  integer: '<n>',
  amount: '<amount>',
};

/**
 * Adds the flags of `names` to a command, spelt and described as in the table of settings.ts,
 * so every command spells them the same way. Values are not parsed here: the resolver does
 * that, so a bad value names its source whether it came from a flag, a variable or a profile.
 */
export function addSettingOptions(
  command: Command,
  names: readonly SettingName[],
  defaults: SettingFlags = {},
): Command {
  for (const name of names) {
    const s = setting(name);
    if (s.flag === undefined) continue;
    const negated = s.flag.startsWith('--no-');
    const placeholder = s.arg ?? PLACEHOLDERS[s.type.kind];
    const arg = placeholder === undefined ? '' : ` ${placeholder}`;
    const d = defaults[name] ?? s.default;
    const shownDefault = d === undefined || s.type.kind === 'boolean' ? '' : `, default ${String(d)}`;
    const value = s.type.kind === 'boolean' ? `=${negated ? 'false' : 'true'}` : '';
    const help = `${negated ? 'do not ' : ''}${s.description}${shownDefault} (env ${s.env}${value})`;
    command.addOption(new Option(`${s.flag}${arg}`, help));
  }
  return command;
}

/**
 * The connection flags (CONNECTION_SETTINGS), with a command's own defaults in their help.
 * Read them back with configFlagsFrom(cmd.opts()).
 */
export function addConfigOptions(command: Command, defaults: SettingFlags = {}): Command {
  return addSettingOptions(command, CONNECTION_SETTINGS, defaults);
}

/**
 * Picks the settings' flags out of commander's parsed options (camel-cased by commander): a
 * value for every flag that was given, nothing for one that was not, so the environment, the
 * profile and the defaults fill the rest.
 */
export function configFlagsFrom(opts: Record<string, unknown>): SettingFlags {
  const flags: SettingFlags = {};
  for (const name of SETTING_NAMES) {
    const s = setting(name);
    if (s.flag === undefined) continue;
    const v = opts[flagAttribute(s.flag)];
    if (s.type.kind === 'boolean') {
      // A switch: commander stores true for `--x` and false for `--no-x`; a default is no value.
      const negated = s.flag.startsWith('--no-');
      if (v === !negated) flags[name] = v as boolean;
    } else if (typeof v === 'string') {
      flags[name] = v;
    }
  }
  return flags;
}
