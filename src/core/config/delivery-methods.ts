import type { LineCounter, Node as YamlNode } from 'yaml';
import { UsageError } from '../errors.js';
import type { Settings } from './resolve-settings.js';
import { yamlLocator, yamlPackage } from './yaml-location.js';

/**
 * The `deliveryMethods` table of the config file (docs/configuration.md#delivery-methods): a
 * shop's shipping method as its export writes it → one of the account's delivery options (its
 * label or code), shared by every preset, mapping and route. At the top of the file for every
 * profile, and in a profile for that profile's account, whose entries win.
 */

/** One entry: what the shop's method stands for, and where the file says so (`file:line:col`). */
export interface DeliveryMethodEntry {
  target: string;
  at: string;
}

/** Shop method (trimmed, as written) → entry. */
export type DeliveryMethodTable = ReadonlyMap<string, DeliveryMethodEntry>;

/** Entries a table may have: a shop has a handful of methods; a table of thousands is a mistake. */
const MAX_ENTRIES = 1000;
/** Characters of a shop method or a target: labels are short. */
const MAX_TEXT = 200;

/**
 * Parses a `deliveryMethods` mapping (`field`: `deliveryMethods` or `profiles.NAME.deliveryMethods`);
 * every problem names `file:line:col`.
 */
export function parseDeliveryMethods(
  node: unknown,
  ctx: { path: string; lineCounter: LineCounter },
  field: string,
): Map<string, DeliveryMethodEntry> {
  const { isMap, isScalar } = yamlPackage();
  const at = yamlLocator(ctx.path, ctx.lineCounter);
  const fail = (n: unknown, message: string): never => {
    throw new UsageError(`config file ${at(n)}: ${field}: ${message}`);
  };
  const table = new Map<string, DeliveryMethodEntry>();
  const section = node as YamlNode | null | undefined;
  if (section === undefined || section === null || (isScalar(section) && section.value === null)) return table;
  if (!isMap(section))
    return fail(section, 'must be a mapping of shop method → delivery option ("Express": UPS 2nd Day Air)');
  if (section.items.length > MAX_ENTRIES) return fail(section, `has more than ${MAX_ENTRIES} entries`);
  const text = (n: unknown, what: string): string => {
    const v = isScalar(n) ? n.value : undefined;
    if ((typeof v !== 'string' && typeof v !== 'number') || String(v).trim() === '')
      return fail(n, `${what} must be text`);
    const s = String(v).trim();
    return s.length > MAX_TEXT ? fail(n, `${what} is longer than ${MAX_TEXT} characters`) : s;
  };
  for (const pair of section.items) {
    const shop = text(pair.key, 'a shop method');
    if (table.has(shop)) fail(pair.key, `"${shop}" is listed twice`);
    table.set(shop, { target: text(pair.value, `the delivery option of "${shop}"`), at: at(pair.key) });
  }
  return table;
}

/** The table in force: the config file's, with the selected profile's entries over it. */
export function deliveryMethodTable(settings: Pick<Settings, 'configFile' | 'profile'>): DeliveryMethodTable {
  const file = settings.configFile;
  const profile = settings.profile === null ? undefined : file?.profileDeliveryMethods?.[settings.profile];
  return new Map([...(file?.deliveryMethods ?? []), ...(profile ?? [])]);
}

/**
 * The table's entry for a shop method: as written (trimmed), else the one entry that differs
 * only in case. Undefined when the table has none.
 */
export function tableEntry(table: DeliveryMethodTable, written: string): DeliveryMethodEntry | undefined {
  const text = written.trim();
  const exact = table.get(text);
  if (exact !== undefined) return exact;
  const folded = text.toLowerCase();
  const near = [...table].filter(([k]) => k.toLowerCase() === folded);
  return near.length === 1 ? near[0][1] : undefined;
}
