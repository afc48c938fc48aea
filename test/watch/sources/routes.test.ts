import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sandboxConfig } from '../../../src/core/config/sandbox-config.js';
import type { InputEvent } from '../../../src/watch/events.js';
import { ROOT } from '../../support/dist.js';
import { tempDir } from '../../support/temp-files.js';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { ITEMS, manifest } from '../../support/yaml-manifests.js';

const fx = watchFixture('htorder-routes-');
let conf: Awaited<ReturnType<typeof tempDir>>;

beforeEach(async () => {
  conf = await tempDir('htorder-routes-config-');
});
afterEach(async () => {
  await conf.remove();
});

const ls = async (sub = ''): Promise<string[]> => (await readdir(join(fx.drop.path, sub)).catch(() => [])).sort();
const inDone = (name: string) => async () => ((await ls('done')).includes(name) ? true : undefined);
const inFailed = (name: string) => async () => ((await ls('failed')).includes(name) ? true : undefined);

/** A config file with `text` (routes, profiles), named by HTORDER_CONFIG so no user's file is read. */
async function withConfig(text: string): Promise<Record<string, string>> {
  const path = join(conf.path, 'htorder.yaml');
  await writeFile(path, text, { mode: 0o600 });
  // A ledger of this test's own, so the accounts' entries can be counted.
  return { ...fx.env, HTORDER_CONFIG: path, HTORDER_STATE_DIR: join(conf.path, 'state') };
}

/** A profile of the config file for one of the sandbox's demo accounts. */
function profile(name: string, account: string): string {
  const c = sandboxConfig(fx.sandbox, account);
  return [
    `  ${name}:`,
    `    baseUrl: ${c.baseUrl}`,
    `    authUrl: ${c.authUrl}`,
    `    realm: ${c.realm}`,
    `    clientId: ${c.clientId}`,
    `    clientSecret: ${c.clientSecret}`,
    '',
  ].join('\n');
}

const printOrder = (orderNumber: string): string => manifest([{ orderNumber, items: ITEMS.print }]);

describe('watch routes (config file)', () => {
  it('sends template CSVs and a Shopify export dropped in one folder each through its own mapping', async () => {
    const routed = await withConfig(`routes:
  - name: elsewhere
    where: /srv/some-other-drop
    match: "*.csv"
    mapping: odoo
  - name: shopify
    match: orders_export*.csv
    mapping: shopify
  - name: template
    match: ["*.csv", "*.yaml"]
`);
    const w = await startWatch({ target: fx.drop.path }, routed);
    try {
      await copyFile(join(ROOT, 'samples/shopify/orders_export.csv'), join(fx.drop.path, 'orders_export.csv'));
      // Upper case: globs match case-insensitively, like the input extensions.
      await copyFile(join(ROOT, 'samples/csv/orders.csv'), join(fx.drop.path, 'ORDERS.CSV'));
      await waitFor(inDone('orders_export.csv'), 'the Shopify export in done/');
      await waitFor(inDone('ORDERS.CSV'), 'the template CSV in done/');
      expect(await ls('failed')).toEqual([]);
      const jobs = (await fx.sandbox.admin.jobs()).map((j) => j.orderNumber).sort();
      expect(jobs).toEqual(['#1041', '#1042', '#1044', 'PO-2001', 'PO-2002', 'PO-2003']);
      const report = JSON.parse(await readFile(join(fx.drop.path, 'done', 'orders_export.csv.result.json'), 'utf8'));
      expect(report.jobs.map((j: { orderNumber: string }) => j.orderNumber)).toContain('#1042');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const chosen = w.logs().filter((l) => l.msg === 'route chosen');
    expect(chosen.map((l) => [l.route, String(l.file).split('/').pop()]).sort()).toEqual([
      ['shopify', 'orders_export.csv'],
      ['template', 'ORDERS.CSV'],
    ]);
    // Every line about the input names its route, the outcome's too.
    expect(
      w
        .logs()
        .filter((l) => l.msg === 'input done')
        .map((l) => l.route)
        .sort(),
    ).toEqual(['shopify', 'template']);
  });

  it('submits the valid jobs of a file whose route says partial, and none of the same file on another route', async () => {
    const routed = await withConfig(`routes:
  - match: "partial-*.yaml"
    partial: true
  - match: "*.yaml"
`);
    const twoJobs = (prefix: string) =>
      manifest([
        { orderNumber: `${prefix}-OK`, items: ITEMS.reorder },
        { orderNumber: `${prefix}-BAD`, items: ITEMS.tooFew },
      ]);
    const w = await startWatch({ target: fx.drop.path }, routed);
    try {
      await writeFile(join(fx.drop.path, 'partial-a.yaml'), twoJobs('P'));
      await writeFile(join(fx.drop.path, 'whole-b.yaml'), twoJobs('W'));
      await waitFor(inFailed('partial-a.yaml'), 'partial-a.yaml in failed/');
      await waitFor(inFailed('whole-b.yaml'), 'whole-b.yaml in failed/');
      expect((await fx.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['P-OK']);
      const statuses = async (name: string) =>
        JSON.parse(await readFile(join(fx.drop.path, 'failed', `${name}.result.json`), 'utf8')).jobs.map(
          (j: { status: string }) => j.status,
        );
      expect(await statuses('partial-a.yaml')).toEqual(['submitted', 'invalid']);
      expect(await statuses('whole-b.yaml')).toEqual(['not-submitted', 'invalid']);
    } finally {
      await w.stop();
    }
  });

  it('a route’s own duplicateWindow holds a re-send of its files; another route’s files go by the setting (off here)', async () => {
    const routed = await withConfig(`routes:
  - match: "strict-*.yaml"
    duplicateWindow: 12h
  - match: "*.yaml"
`);
    const order = (orderNumber: string) => manifest([{ orderNumber, items: ITEMS.reorder }]);
    const w = await startWatch({ target: fx.drop.path }, routed);
    try {
      // Sent through the route without a window of its own: still indexed for the others.
      await writeFile(join(fx.drop.path, 'first.yaml'), order('DUP-1'));
      await waitFor(inDone('first.yaml'), 'first.yaml in done/');
      await writeFile(join(fx.drop.path, 'strict-again.yaml'), order('DUP-2'));
      await writeFile(join(fx.drop.path, 'loose-again.yaml'), order('DUP-3'));
      await waitFor(async () => ((await ls('held')).includes('strict-again.yaml') ? true : undefined), 'held/');
      await waitFor(inDone('loose-again.yaml'), 'loose-again.yaml in done/');
      expect((await fx.sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(['DUP-1', 'DUP-3']);
    } finally {
      await w.stop();
    }
  });

  it('moves a file that matches no route to failed/ with an errors.txt that says so, and sends nothing of it', async () => {
    const routed = await withConfig(`routes:
  - name: shop
    match: ["shop-*.csv", "shop-*.xlsx"]
    mapping: shopify
  - match: "po-*.yaml"
    where: ${relative(conf.path, fx.drop.path)}
`);
    const w = await startWatch({ target: fx.drop.path }, routed);
    try {
      await writeFile(join(fx.drop.path, 'misc.yaml'), manifest('MISC'));
      // A route for this folder (its where relative to the config file) still takes its files.
      await writeFile(join(fx.drop.path, 'po-1.yaml'), manifest('PO'));
      await waitFor(inDone('po-1.yaml'), 'po-1.yaml in done/');
      await waitFor(inFailed('misc.yaml'), 'misc.yaml in failed/');
      expect(await ls('failed')).toEqual(['misc.yaml', 'misc.yaml.errors.txt']);
      const why = await readFile(join(fx.drop.path, 'failed', 'misc.yaml.errors.txt'), 'utf8');
      expect(why).toContain('misc.yaml matches no route of');
      expect(why).toContain('shop: shop-*.csv, shop-*.xlsx; route 2: po-*.yaml');
      expect((await fx.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-1']);
      const failed = w.events().find((e): e is InputEvent => e.kind === 'input' && e.phase === 'failed');
      expect(failed?.name).toBe('misc.yaml');
      expect(failed?.problem).toContain('matches no route');
    } finally {
      await w.stop();
    }
  });

  it('places each order on the account of its route, with separate ledgers, one session per profile', async () => {
    const routed = await withConfig(`profiles:
${profile('demo', 'us-demo')}${profile('other', 'us-other')}
routes:
  - match: "demo-*.yaml"
    profile: demo
  - match: "other-*.yaml"
    profile: other
  - match: "*.yaml"
`);
    const w = await startWatch({ target: fx.drop.path }, routed);
    try {
      await writeFile(join(fx.drop.path, 'demo-1.yaml'), manifest('D'));
      // Asset A10001 is us-demo's own artwork: us-other orders printing instead.
      await writeFile(join(fx.drop.path, 'other-1.yaml'), printOrder('O-1'));
      await writeFile(join(fx.drop.path, 'other-2.yaml'), printOrder('O2-1'));
      // No profile: the watcher's own account (here the environment's, us-demo).
      await writeFile(join(fx.drop.path, 'plain.yaml'), manifest('PLAIN'));
      for (const n of ['demo-1.yaml', 'other-1.yaml', 'other-2.yaml', 'plain.yaml']) await waitFor(inDone(n), n);
      const byAccount = (await fx.sandbox.admin.jobs()).map((j) => `${j.account}:${j.orderNumber}`).sort();
      expect(byAccount).toEqual(['us-demo:D-1', 'us-demo:PLAIN-1', 'us-other:O-1', 'us-other:O2-1']);
      // The ledger keeps each account apart: one folder per account key (region + account id).
      const ledgerDir = join(conf.path, 'state', 'ledger');
      const ledger = (await readdir(ledgerDir)).filter((n) => !n.startsWith('.') && !n.endsWith('.lock'));
      expect(ledger).toHaveLength(2);
      const orders = await Promise.all(
        ledger.map(async (k) =>
          (await readdir(join(ledgerDir, k), { recursive: true })).map((n) => basename(n)).sort(),
        ),
      );
      expect(
        orders
          .map((o) =>
            o
              .filter((n) => n.endsWith('.json'))
              .map((n) => n.replace(/-[0-9a-f]{16}\.json$/, ''))
              .join(' '),
          )
          .sort(),
      ).toEqual(['D-1 PLAIN-1', 'O-1 O2-1']);
      // Dropped again: each account's ledger knows its own order.
      await writeFile(join(fx.drop.path, 'other-1.yaml'), printOrder('O-1'));
      await waitFor(
        async () => ((await ls('done')).filter((n) => n.startsWith('other-1.')).length >= 4 ? true : undefined),
        'the second other-1.yaml in done/',
      );
      expect(await fx.sandbox.admin.jobs()).toHaveLength(4);
      // One session per account, not per file: five inputs, at most one account look-up per session.
      expect((await fx.sandbox.admin.calls())['GET /account']).toBeLessThanOrEqual(3);
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect(w.logs().filter((l) => l.msg === 'route chosen' && l.profile === 'other')).toHaveLength(3);
  });

  it('with --sandbox, a route picks another demo account of the same in-process sandbox', async () => {
    const routed = await withConfig(`routes:
  - match: "other-*.yaml"
    account: us-other
  - match: "*.yaml"
`);
    const w = await startWatch(
      { target: fx.drop.path, sandbox: true },
      {
        HTORDER_CONFIG: routed.HTORDER_CONFIG,
        // The sandbox keeps its jobs and ledger in the state dir: this test's own.
        HTORDER_STATE_DIR: routed.HTORDER_STATE_DIR,
      },
    );
    try {
      // Asset A10001 is us-demo's artwork: the same reorder is valid there and refused on us-other.
      await writeFile(join(fx.drop.path, 'demo.yaml'), manifest('SD'));
      await writeFile(join(fx.drop.path, 'other-asset.yaml'), manifest('SO'));
      await writeFile(join(fx.drop.path, 'other-print.yaml'), printOrder('SP-1'));
      await waitFor(inDone('demo.yaml'), 'demo.yaml in done/');
      await waitFor(inFailed('other-asset.yaml'), 'other-asset.yaml in failed/');
      await waitFor(inDone('other-print.yaml'), 'other-print.yaml in done/');
      expect(await readFile(join(fx.drop.path, 'failed', 'other-asset.yaml.errors.txt'), 'utf8')).toContain('A10001');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const chosen = w.logs().filter((l) => l.msg === 'route chosen');
    expect(chosen.filter((l) => l.account === 'us-other')).toHaveLength(2);
  });
});
