import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWatch } from '../../../src/app/watch-daemon.js';
import { parseConfigFile } from '../../../src/core/config/config-file.js';
import { chooseRoute } from '../../../src/core/config/routes.js';
import { UsageError } from '../../../src/core/errors.js';
import { sink } from '../../support/sink.js';
import { tempDirPerTest } from '../../support/temp-files.js';
import { usageMessage } from '../../support/usage-error.js';

const F = '/etc/htorder/config.yaml';
const parse = (text: string) => parseConfigFile(text, F);

describe('routes in the config file', () => {
  it('reads an ordered list of rules; the first rule whose glob matches takes the file', () => {
    const { routes } = parse(`profiles:
  shop: { clientId: x }
routes:
  - name: shopify
    match: orders_export*.csv
    mapping: shopify
    profile: shop
    partial: true
  - match: ["*.csv", "*.YAML"]
    where: [/srv/drop, "s3://acme/in/"]
`);
    expect(routes?.map((r) => [r.index, r.name, r.mapping, r.profile, r.partial, r.where])).toEqual([
      [1, 'shopify', 'shopify', 'shop', true, undefined],
      [2, 'route 2', undefined, undefined, false, ['/srv/drop', 's3://acme/in/']],
    ]);
    expect(routes?.[0]?.at).toBe(`${F}:4:5`);
    const pick = (name: string) => chooseRoute(routes ?? [], name)?.name;
    expect(pick('orders_export.csv')).toBe('shopify');
    expect(pick('Orders_Export_2.CSV')).toBe('shopify');
    expect(pick('po.csv')).toBe('route 2');
    expect(pick('po.yaml')).toBe('route 2');
    expect(pick('po.json')).toBeUndefined();
  });

  it('never lets * match a hidden name', () => {
    const { routes } = parse('routes:\n  - match: "*"\n');
    expect(chooseRoute(routes ?? [], '.orders.csv')).toBeUndefined();
    expect(chooseRoute(routes ?? [], 'orders.csv')).toBeDefined();
  });

  it('an empty routes section is no routes', () => {
    expect(parse('routes: []\n').routes).toEqual([]);
    expect(parse('routes:\n').routes).toBeUndefined();
  });

  it('locates every problem of the section at its file:line:col, all at once', () => {
    const message = usageMessage(() =>
      parse(`profiles:
  us: { clientId: x }
routes:
  - match: "orders_[a-z.csv"
    mapping: shopify
  - match: sub/*.csv
  - match: "!*.tmp"
    profle: us
  - mapping: odoo
  - match: "*.csv"
    profile: nz
    partial: "yes"
  - "*.csv"
  - match: ["*.csv", "a{b"]
`),
    );
    const lines = message.split('\n');
    expect(lines).toEqual([
      `${F}:4:12: routes[1].match: "orders_[a-z.csv": not a valid glob: Missing closing: "]" - use "\\\\]" to match literal characters`,
      `${F}:6:12: routes[2].match: "sub/*.csv": a glob matches a file name, never a path (sub-folders are not watched; "where" names the drop location)`,
      `${F}:8:5: routes[3].profle: unknown key (known: name, match, where, mapping, profile, account, partial, duplicateWindow)`,
      `${F}:7:12: routes[3].match: "!*.tmp": negations are not supported: put a narrower rule first (first match wins)`,
      `${F}:9:5: routes[4].match: missing: every rule needs a file-name glob ("*" for any file)`,
      `${F}:11:14: routes[5].profile: no profile "nz" in this file (profiles: us)`,
      `${F}:12:14: routes[5].partial: must be true or false`,
      `${F}:13:5: routes[6]: must be a mapping with at least "match"`,
      `${F}:14:22: routes[7].match: "a{b": not a valid glob: Missing closing: "}" - use "\\\\}" to match literal characters`,
    ]);
  });

  it('a rule may set its own suspected-duplicate window, a length of time as the setting takes it', () => {
    const { routes } = parse(`routes:
  - match: "erp-*.csv"
    duplicateWindow: 7d
  - match: "test-*.csv"
    duplicateWindow: 0
  - match: "*"
`);
    expect(routes?.map((r) => r.duplicateWindowMs)).toEqual([7 * 86_400_000, 0, undefined]);
    const message = usageMessage(() =>
      parse(`routes:
  - match: "a*"
    duplicateWindow: 7
  - match: "b*"
    duplicateWindow: -1h
  - match: "c*"
    duplicateWindow: 400d
`),
    );
    const rule = 'must be a length of time such as 12h, 36h or 7d (units ms, s, m, h, d), or 0, at most 366d';
    expect(message.split('\n')).toEqual([
      `${F}:3:22: routes[1].duplicateWindow: ${rule}, got 7`,
      `${F}:5:22: routes[2].duplicateWindow: ${rule}, got "-1h"`,
      `${F}:7:22: routes[3].duplicateWindow: ${rule}, got "400d"`,
    ]);
  });

  it('a routes section that is not a list, and an unknown top-level key, are errors', () => {
    expect(usageMessage(() => parse('routes:\n  match: "*.csv"\n'))).toBe(
      `${F}:2:3: routes: must be a list of rules (each "- match: GLOB …")`,
    );
    expect(usageMessage(() => parse('route:\n  - match: "*"\n'))).toContain(
      'unknown top-level key "route" (did you mean "routes"?) (expected "profiles", "routes", "notify", "deliveryMethods" or a setting',
    );
  });
});

describe('htorder watch with routes: checked before anything is watched (exit 2)', () => {
  async function start(config: string, opts: { mapping?: string; partial?: boolean; sandbox?: boolean } = {}) {
    const dir = await tempDirPerTest('htorder-routes-');
    const configPath = join(dir, 'htorder.yaml');
    await writeFile(configPath, config, { mode: 0o600 });
    const drop = join(dir, 'drop');
    await mkdir(drop);
    const err = await runWatch(
      { target: drop, flags: {}, sandbox: opts.sandbox ?? true, ...opts },
      {
        stderr: sink().stream,
        env: { HTORDER_CONFIG: configPath, HTORDER_STATE_DIR: join(dir, 'state') },
        cwd: dir,
        signal: AbortSignal.abort(),
      },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
    // Nothing was watched: the drop folder's layout was never made.
    expect(existsSync(join(drop, 'processing'))).toBe(false);
    return { message: (err as Error).message, configPath, dir };
  }

  it('a mapping file that does not exist, located at its route', async () => {
    const { message, configPath } = await start('routes:\n  - match: "*.csv"\n    mapping: erp/mapping.yaml\n');
    expect(message).toBe(
      `${configPath}:3:14: routes[1].mapping: "erp/mapping.yaml" is neither a mapping file (beside ${configPath}) nor a preset`,
    );
  });

  it('a broken mapping file: its own problem at its own line, and the route that names it', async () => {
    const dir = await tempDirPerTest('htorder-routes-mapping-');
    await writeFile(join(dir, 'erp.yaml'), 'fields:\n  orderNumber: "[Order"\n  bogus: 1\n');
    const { message, configPath } = await start(`routes:\n  - match: "*.csv"\n    mapping: ${join(dir, 'erp.yaml')}\n`);
    expect(message.startsWith(`${configPath}:3:14: routes[1].mapping: ${join(dir, 'erp.yaml')}:`)).toBe(true);
  });

  it('--mapping and --partial are refused together with routes for the location', async () => {
    const routes = 'routes:\n  - match: "*.csv"\n';
    expect((await start(routes, { mapping: 'shopify' })).message).toMatch(
      /^--mapping cannot be combined with the routes of .*htorder\.yaml for this location.*add a last rule `- match: "\*"`$/,
    );
    expect((await start(routes, { partial: true })).message).toMatch(/^--partial cannot be combined with the routes/);
  });

  it('profile with --sandbox, account without it', async () => {
    const withProfile = 'profiles:\n  us: { clientId: x }\nroutes:\n  - match: "*.csv"\n    profile: us\n';
    const a = await start(withProfile);
    expect(a.message).toBe(
      `${a.configPath}:5:14: routes[1].profile: --sandbox supplies its own accounts: use "account"`,
    );
    const b = await start('routes:\n  - match: "*.csv"\n    account: us-other\n', { sandbox: false });
    expect(b.message).toContain(`${b.configPath}:3:14: routes[1].account: "account" picks a sandbox demo account`);
  });

  it('routes for another location do not apply: --mapping works as before there', async () => {
    // The route names another folder, so this watcher is not routed, and its --mapping is
    // loaded as usual (here: a missing file, reported by the mapping loader itself).
    const dir = await tempDirPerTest('htorder-routes-other-');
    const { message } = await start(`routes:\n  - where: ${join(dir, 'elsewhere')}\n    match: "*.csv"\n`, {
      mapping: join(dir, 'missing.yaml'),
    });
    expect(message).toContain('cannot read mapping file');
  });
});
