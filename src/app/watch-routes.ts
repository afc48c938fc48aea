import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { ConfigFile } from '../core/config/config-file.js';
import { parsePath } from '../core/config/parse-setting.js';
import { findConfigFile, type SettingFlags } from '../core/config/resolve-settings.js';
import { chooseRoute, routeMatcher, routesFor, type Route } from '../core/config/routes.js';
import { UsageError } from '../core/errors.js';
import { presetPath } from '../manifest/mapping/presets-dir.js';
import type { Mapping } from '../manifest/mapping/model.js';
import { isS3Url, parseS3Url } from '../storage/s3/s3-url.js';
import { ACCOUNT_SETTINGS } from './api-session.js';

/** A route of the config file, ready for the watcher: its mapping loaded, its session named. */
export interface WatchRoute extends Route {
  matches(name: string): boolean;
  /** The loaded mapping, when the route names one. */
  loadedMapping?: Mapping;
  /** Routes with the same key share one API session, catalogue and ledger account. */
  sessionKey: string;
}

export interface WatchRoutes {
  file: string;
  /** Every bucket location (`s3://…`) any rule's `where` names: drop locations of the watchers sharing the file. */
  locations: string[];
  /** Empty when every rule of the file names other drop locations (`where`). */
  routes: WatchRoute[];
  /** The route that takes `name` (first match wins), or undefined. */
  choose(name: string): WatchRoute | undefined;
  /** For errors.txt and logs: why `name` was taken by none, listing the routes' globs. */
  noRoute(name: string): string;
}

/**
 * The routes of the config file for the watched `target`, checked as a whole before anything
 * is watched (docs/watch.md#routes): undefined when the file has none, no routes when none is
 * for this location. Every problem is a UsageError (exit 2) located in the config file.
 */
export async function loadWatchRoutes(opts: {
  target: string;
  flags: SettingFlags;
  env: Record<string, string | undefined>;
  cwd: string;
  sandbox: boolean;
  /** Command-line options that routes replace. */
  mapping?: string;
  partial?: boolean;
}): Promise<WatchRoutes | undefined> {
  const home = homedir();
  const file = findConfigFile({ env: opts.env, flags: opts.flags, cwd: opts.cwd, home });
  if (!file?.routes || file.routes.length === 0) return undefined;
  const routes = routesFor(file.routes, locationMatcher(opts.target, opts.cwd, file, home));
  const locations = file.routes.flatMap((r) => (r.where ?? []).filter(isS3Url));
  // Every rule names other locations: this watcher runs as without routes (and says so).
  if (routes.length === 0)
    return { file: file.path, locations, routes: [], choose: () => undefined, noRoute: () => '' };
  checkRoutes(routes, file, opts);
  const mappings = new Map<string, Mapping>();
  const loaded: WatchRoute[] = [];
  for (const r of routes) {
    const loadedMapping = r.mapping === undefined ? undefined : await routeMapping(r, file, home, mappings);
    loaded.push({
      ...r,
      matches: routeMatcher(r),
      ...(loadedMapping ? { loadedMapping } : {}),
      sessionKey:
        r.profile !== undefined ? `profile:${r.profile}` : r.account !== undefined ? `account:${r.account}` : '',
    });
  }
  return {
    file: file.path,
    locations,
    routes: loaded,
    choose: (name) => chooseRoute(loaded, name),
    noRoute: (name) =>
      `${name} matches no route of ${file.path} for this location (${loaded
        .map((r) => `${r.name}: ${r.match.join(', ')}`)
        .join('; ')}); ` + 'nothing of it was sent. Add a rule for it (or rename the file) and drop it again',
  };
}

/** Throws a UsageError naming every route that contradicts the command line (or --sandbox). */
function checkRoutes(
  routes: Route[],
  file: ConfigFile,
  opts: { flags: SettingFlags; sandbox: boolean; mapping?: string; partial?: boolean },
): void {
  const contradiction = (what: string): UsageError =>
    new UsageError(
      `${what} cannot be combined with the routes of ${file.path} for this location: each route says ` +
        'its own mapping and partial; for files no rule matches, add a last rule `- match: "*"`',
    );
  if (opts.mapping !== undefined) throw contradiction('--mapping');
  if (opts.partial === true) throw contradiction('--partial');
  const problems: string[] = [];
  for (const r of routes) {
    if (opts.sandbox && r.profile !== undefined) {
      problems.push(
        `${r.keyAt.profile}: routes[${r.index}].profile: --sandbox supplies its own accounts: use "account"`,
      );
    }
    if (!opts.sandbox && r.account !== undefined) {
      problems.push(
        `${r.keyAt.account}: routes[${r.index}].account: "account" picks a sandbox demo account (with --sandbox); ` +
          'for configured accounts use "profile"',
      );
    }
  }
  // Account settings on the command line would silently override every route's profile.
  const flag = ACCOUNT_SETTINGS.find((k) => opts.flags[k] !== undefined);
  const withProfile = routes.find((r) => r.profile !== undefined);
  if (flag && withProfile) {
    problems.push(
      `${withProfile.keyAt.profile}: routes[${withProfile.index}].profile: the command line sets ${flag}, which ` +
        "would override this profile's account; put account settings in the profiles",
    );
  }
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
}

/** The mapping route `r` names, loaded once per file (`loaded`); its problems located at the route. */
async function routeMapping(r: Route, file: ConfigFile, home: string, loaded: Map<string, Mapping>): Promise<Mapping> {
  const at = `${r.keyAt.mapping}: routes[${r.index}].mapping`;
  const path = mappingPath(r.mapping ?? '', file, home);
  if (path === undefined) {
    throw new UsageError(`${at}: "${r.mapping}" is neither a mapping file (beside ${file.path}) nor a preset`);
  }
  const known = loaded.get(path);
  if (known) return known;
  try {
    // Loaded on first use: a watcher without mappings starts without their code.
    const { loadMapping } = await import('../manifest/mapping/load-mapping.js');
    const mapping = await loadMapping(path);
    loaded.set(path, mapping);
    return mapping;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    // The mapping's own problems keep their file:line:col; this says which route named it.
    throw new UsageError(`${at}: ${err.message}`);
  }
}

/**
 * Where a route's mapping is: a file beside the config file, else a preset of that name
 * (`shopify`), else undefined.
 */
function mappingPath(value: string, file: ConfigFile, home: string): string | undefined {
  const path = parsePath(value, `mapping in ${file.path}`, dirname(file.path), home);
  if (existsSync(path) && statSync(path).isFile()) return path;
  return presetPath(value) ?? (existsSync(path) ? path : undefined);
}

/**
 * Whether a route's `where` names the watched location: for folders the same folder (links
 * resolved, relative paths against the config file's folder), for buckets the same bucket and
 * prefix. A malformed s3:// URL is located in the config file.
 */
function locationMatcher(target: string, cwd: string, file: ConfigFile, home: string): (where: string) => boolean {
  const s3 = isS3Url(target) ? parseS3Url(target) : undefined;
  const folder = s3 ? undefined : real(resolve(cwd, target));
  for (const r of file.routes ?? []) {
    for (const w of r.where ?? []) {
      const parsed = isS3Url(w) ? parseS3Url(w) : undefined;
      if (parsed && 'error' in parsed)
        throw new UsageError(`${r.keyAt.where}: routes[${r.index}].where: ${parsed.error}`);
    }
  }
  return (where) => {
    if (isS3Url(where)) {
      const w = parseS3Url(where);
      return (
        s3 !== undefined && !('error' in s3) && !('error' in w) && w.bucket === s3.bucket && w.prefix === s3.prefix
      );
    }
    return folder !== undefined && real(parsePath(where, `where in ${file.path}`, dirname(file.path), home)) === folder;
  };
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
