import type picomatch from 'picomatch';
import type { LineCounter, Scalar, YAMLMap, Node as YamlNode } from 'yaml';
import { UsageError } from '../errors.js';
import { compileFileGlob } from './file-glob.js';
import { durationMs, durationRule } from './parse-setting.js';
import { SETTINGS } from './settings.js';
import { yamlLocator, yamlPackage } from './yaml-location.js';
import { lateRequire } from '../late-require.js';

/**
 * The `routes` section of the config file (docs/watch.md#routes): an ordered list of rules that
 * let one watcher send each dropped file through its own mapping, account and `partial`. Pure:
 * the declaration is checked here (keys, globs, profiles of the same file); mapping files are
 * read by the composition layer, which also opens one API session per account.
 */
export interface Route {
  /** 1-based position in the list. */
  index: number;
  /** For logs and errors.txt: the rule's `name`, else `route N`. */
  name: string;
  /** File-name globs, as written; any one matching takes the file. */
  match: readonly string[];
  /**
   * Drop locations the rule applies to, as written (folders relative to the config file, or
   * s3:// URLs); undefined: every location.
   */
  where?: readonly string[];
  /** A preset name or a mapping file (relative to the config file), as written. */
  mapping?: string;
  profile?: string;
  /** A sandbox demo account (with `--sandbox`). */
  account?: string;
  partial: boolean;
  /** The suspected-duplicate window of the files it takes, in ms (setting duplicateWindow); absent: the setting's. */
  duplicateWindowMs?: number;
  /** `file:line:col` of the rule, and of each of its keys, for messages. */
  at: string;
  keyAt: Partial<Record<RouteKey, string>>;
}

const ROUTE_KEYS = ['name', 'match', 'where', 'mapping', 'profile', 'account', 'partial', 'duplicateWindow'] as const;
type RouteKey = (typeof ROUTE_KEYS)[number];

/**
 * Globs match one file name (never a path: a drop location's inputs are single names), case
 * insensitively — the same as the input extensions are — because exports arrive from Windows
 * and macOS senders as `Orders.CSV` as often as `orders.csv`. Hidden names are never inputs, and
 * `dot: false` keeps `*` from meaning anything else. An unbalanced bracket, brace or parenthesis
 * is an error rather than a literal character.
 */
const GLOB_OPTIONS: picomatch.PicomatchOptions = { nocase: true, dot: false, strictBrackets: true, windows: false };

/** How one rule's nodes are located, and where its problems go (`key` '' for the rule itself). */
interface RuleEnv {
  at: (node: unknown) => string;
  problem: (at: string, key: string, message: string) => void;
}

/**
 * Parses the `routes` node of a config file. `profiles` are the file's profile names, so a route
 * naming an unknown one is an error here, located like every other problem of the section.
 */
export function parseRoutes(
  node: unknown,
  ctx: { path: string; lineCounter: LineCounter; profiles: readonly string[] },
): Route[] {
  const at = yamlLocator(ctx.path, ctx.lineCounter);
  if (!yamlPackage().isSeq(node)) {
    throw located([`${at(node)}: routes: must be a list of rules (each "- match: GLOB …")`]);
  }
  const problems: string[] = [];
  const routes = node.items.flatMap((item, i) => {
    const problem = (where: string, key: string, message: string): void => {
      problems.push(`${where}: routes[${i + 1}]${key ? `.${key}` : ''}: ${message}`);
    };
    return parseRule(item, i + 1, ctx.profiles, { at, problem }) ?? [];
  });
  if (problems.length > 0) throw located(problems);
  return routes;
}

function parseRule(item: unknown, index: number, profiles: readonly string[], env: RuleEnv): Route | undefined {
  const { at, problem } = env;
  if (!yamlPackage().isMap(item)) {
    problem(at(item), '', 'must be a mapping with at least "match"');
    return undefined;
  }
  const { keyAt, values } = ruleKeys(item, env);
  const text = (key: RouteKey): string | undefined => readText(values[key], key, env);
  const match = readGlobs(values.match, at(item), env);
  const where = readTexts(values.where, 'where', env);
  const mapping = text('mapping');
  const profile = text('profile');
  if (profile !== undefined && !profiles.includes(profile)) {
    const known = profiles.length ? profiles.join(', ') : 'none';
    problem(keyAt.profile ?? at(item), 'profile', `no profile "${profile}" in this file (profiles: ${known})`);
  }
  const account = text('account');
  const partial = readPartial(values.partial, env);
  const duplicateWindowMs = readWindow(values.duplicateWindow, env);
  return {
    index,
    name: text('name') ?? `route ${index}`,
    match,
    where,
    mapping,
    profile,
    account,
    partial,
    ...(duplicateWindowMs === undefined ? {} : { duplicateWindowMs }),
    at: at(item),
    keyAt,
  };
}

/** The rule's known keys, their values and locations; an unknown key is a problem. */
function ruleKeys(item: YAMLMap, { at, problem }: RuleEnv) {
  const { isScalar } = yamlPackage();
  const keyAt: Partial<Record<RouteKey, string>> = {};
  const values: Partial<Record<RouteKey, YamlNode>> = {};
  for (const pair of item.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (!(ROUTE_KEYS as readonly string[]).includes(key)) {
      problem(at(pair.key), key, `unknown key (known: ${ROUTE_KEYS.join(', ')})`);
      continue;
    }
    keyAt[key as RouteKey] = at(pair.value ?? pair.key);
    values[key as RouteKey] = pair.value as YamlNode;
  }
  return { keyAt, values };
}

const isText = (x: unknown): x is Scalar<string> =>
  yamlPackage().isScalar(x) && typeof x.value === 'string' && x.value.trim() !== '';

function readText(v: YamlNode | undefined, key: RouteKey, { at, problem }: RuleEnv): string | undefined {
  if (v === undefined) return undefined;
  if (isText(v)) return v.value;
  problem(at(v), key, 'must be non-empty text');
  return undefined;
}

/** One text or a list of them; `located` gets each one's location. */
function readTexts(
  v: YamlNode | undefined,
  key: RouteKey,
  { at, problem }: RuleEnv,
  located: string[] = [],
): string[] | undefined {
  if (v === undefined) return undefined;
  const list = yamlPackage().isSeq(v);
  const items = list ? v.items : [v];
  const out: string[] = [];
  items.forEach((x, j) => {
    if (isText(x)) {
      out.push(x.value);
      located.push(at(x));
    } else problem(at(x), list ? `${key}[${j + 1}]` : key, 'must be non-empty text');
  });
  if (items.length === 0) problem(at(v), key, 'must not be an empty list');
  return out;
}

/** The rule's `match`: required, each glob checked. */
function readGlobs(v: YamlNode | undefined, ruleAt: string, env: RuleEnv): string[] {
  const globAt: string[] = [];
  const match = readTexts(v, 'match', env, globAt);
  if (match === undefined)
    env.problem(ruleAt, 'match', 'missing: every rule needs a file-name glob ("*" for any file)');
  (match ?? []).forEach((glob, j) => {
    const why = globProblem(glob);
    if (why) env.problem(globAt[j] ?? ruleAt, 'match', `"${glob}": ${why}`);
  });
  return match ?? [];
}

function readPartial(v: YamlNode | undefined, { at, problem }: RuleEnv): boolean {
  if (v === undefined) return false;
  if (yamlPackage().isScalar(v) && typeof v.value === 'boolean') return v.value;
  problem(at(v), 'partial', 'must be true or false');
  return false;
}

/** `duplicateWindow`: a length of time, as the setting of that name takes it. */
function readWindow(v: YamlNode | undefined, { at, problem }: RuleEnv): number | undefined {
  if (v === undefined) return undefined;
  const max = SETTINGS.duplicateWindow.type.max;
  const value = yamlPackage().isScalar(v) ? v.value : undefined;
  const ms = typeof value === 'string' || typeof value === 'number' ? durationMs(String(value).trim(), max) : undefined;
  if (ms === undefined) problem(at(v), 'duplicateWindow', `${durationRule(max)}, got ${JSON.stringify(value ?? null)}`);
  return ms;
}

/** Why `glob` cannot be a route's file-name glob, or undefined when it can. */
function globProblem(glob: string): string | undefined {
  if (glob.includes('/')) {
    return 'a glob matches a file name, never a path (sub-folders are not watched; "where" names the drop location)';
  }
  // A negation would make "first match wins" hard to read: order the rules instead.
  if (glob.startsWith('!')) return 'negations are not supported: put a narrower rule first (first match wins)';
  if (/(^|[^\\])(\\\\)*\\$/.test(glob)) return 'ends in a lone backslash';
  try {
    picomatchPackage().makeRe(glob, GLOB_OPTIONS);
    compileFileGlob(glob);
  } catch (err) {
    return `not a valid glob: ${(err as Error).message}`;
  }
  return undefined;
}

/** picomatch, loaded when a config file has routes to check: a command without them never needs it. */
function picomatchPackage(): typeof picomatch {
  return lateRequire<typeof picomatch>('picomatch');
}

/**
 * A name matcher for a route's globs (checked by parseRoutes). picomatch says which globs are
 * valid; compileFileGlob matches them, in linear time on the names droppers choose.
 */
export function routeMatcher(route: Pick<Route, 'match'>): (name: string) => boolean {
  const matchers = route.match.map((g) => compileFileGlob(g));
  return (name) => matchers.some((m) => m(name));
}

/**
 * The routes that apply to one drop location: those without `where`, and those whose `where`
 * names it. `sameLocation` compares a `where` entry with the watched location (folder paths
 * after resolving links, S3 URLs as bucket and prefix), which is the caller's to know.
 */
export function routesFor(routes: readonly Route[], sameLocation: (where: string) => boolean): Route[] {
  return routes.filter((r) => r.where === undefined || r.where.some(sameLocation));
}

/** The first route whose globs match `name` (first match wins), or undefined. */
export function chooseRoute<R extends Pick<Route, 'match'>>(
  routes: readonly (R & { matches?: (name: string) => boolean })[],
  name: string,
): R | undefined {
  return routes.find((r) => (r.matches ?? routeMatcher(r))(name));
}

/** One message for several problems, each on its own line starting with its location (like errors.txt). */
function located(problems: string[]): UsageError {
  const lines = problems.slice(0, 20);
  if (problems.length > 20) lines.push(`… and ${problems.length - 20} more problems in the routes`);
  return new UsageError(lines.join('\n'));
}
