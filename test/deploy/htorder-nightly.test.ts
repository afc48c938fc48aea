import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { ROOT, requireDist } from '../support/dist.js';
import { injectedBug } from '../support/injected-bug.js';
import { NightOrders } from '../support/nights-orders.js';
import { type CronFolder, cronFolder, htorder } from '../support/nights-recipes.js';
import { tempDir } from '../support/temp-files.js';

/**
 * deploy/htorder-nightly, the cron wrapper (and what the systemd timer runs), two nights
 * against the sandbox: what cron would mail (nothing on a good night; the line and what to do
 * when someone must act), the log line of every run, and the exit codes passed on.
 */

const WRAPPER = join(ROOT, 'deploy/htorder-nightly');
let sandbox: Sandbox;
let dir: Awaited<ReturnType<typeof tempDir>>;
let folder: CronFolder;
const orders = new NightOrders(5);

beforeAll(async () => {
  requireDist();
  sandbox = await startSandbox({ port: 0 });
  dir = await tempDir('htorder-nightly-');
  folder = await cronFolder(dir.path, sandbox);
});
afterAll(async () => {
  await sandbox?.close();
  await dir?.remove();
});

const logLines = async (): Promise<string[]> =>
  (await readFile(join(folder.erp, 'htorder-nightly.log'), 'utf8'))
    .split('\n')
    .filter((l) => l.includes('htorder-nightly: exit'));

describe('deploy/htorder-nightly', () => {
  it('is a POSIX shell script', () => {
    const r = spawnSync('/bin/sh', ['-n', WRAPPER], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('two nights: a held job is mailed with the command that approves it (exit 4); approved, the next night sends it and mails nothing (exit 0)', async () => {
    // Night 1: the shop's export and a season's kit over maxJobCost.
    for (const f of [orders.shopExport(1), orders.overLimit(1)]) await writeFile(join(folder.exports, f.name), f.text);
    const night1 = await folder.startWrapper().done;
    expect(night1.code, night1.stdout + night1.stderr).toBe(4);
    // What cron mails: the one line, and per input that needs someone, what to do.
    expect(night1.stdout).toMatch(/htorder-nightly: exit 4: jobs wait for approval/);
    expect(night1.stdout).toContain('exports/big-1.csv: held: htorder approve exports/big-1.csv');
    expect(night1.stderr).toBe('');
    expect(await logLines()).toHaveLength(1);
    const log = await readFile(join(folder.erp, 'htorder-nightly.log'), 'utf8');
    expect(log).toContain('awaiting approval: estimate 730.00 USD is over maxJobCost 500.00 USD');
    expect(log).toContain('read as a Shopify export');

    // The morning: someone runs what the mail says, in the ERP folder, with the same config.
    // (Never spawnSync here: the sandbox answering it runs in this process.)
    await htorder(['approve', 'exports/big-1.csv'], folder.env(), folder.erp);

    // Night 2: the export has grown; last night's reports are in the glob too.
    await sandbox.admin.advanceClock(24 * 3_600_000);
    await writeFile(join(folder.exports, 'orders_export.csv'), orders.shopExport(2).text);
    const night2 = await folder.startWrapper(folder.env(24)).done;
    expect(night2.code, night2.stdout + night2.stderr).toBe(0);
    expect(night2.stdout).toBe('');
    const lines = await logLines();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/exit 0: every job submitted or already submitted/);
    const created = (await sandbox.admin.jobs()).map((j) => j.orderNumber);
    expect(created).toContain('BIG-0001');
    const shop = orders.shopOrdersUpTo(2).filter((o) => !o.cancelled);
    for (const o of shop) expect(created.filter((c) => c === o.name)).toHaveLength(1);
  }, 120_000);

  it('a night with nothing to run is one log line and no mail (exit 0)', async () => {
    const r = await folder.startWrapper({ HTORDER_NIGHTLY_DIR: dir.path, HTORDER_NIGHTLY_GLOB: 'empty/*.csv' }).done;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(await readFile(join(dir.path, 'htorder-nightly.log'), 'utf8')).toMatch(
      new RegExp(`exit 0: no file matches empty/\\*\\.csv in ${dir.path}; nothing to run`),
    );
  }, 60_000);

  it('a broken setup is mailed as a configuration error, nothing sent (exit 2)', async () => {
    const before = (await sandbox.admin.jobs()).length;
    const r = await folder.startWrapper({ HTORDER_CONFIG: join(dir.path, 'no-such-config.yaml') }).done;
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/htorder-nightly: exit 2: usage or configuration error; nothing was sent/);
    expect(r.stdout).toContain('no-such-config.yaml');
    expect((await sandbox.admin.jobs()).length).toBe(before);
  }, 60_000);

  it('an API that cannot be reached is mailed as "nothing was decided", for the next run to retry (exit 3)', async () => {
    const down = await startSandbox({ port: 0 });
    const other = await cronFolder(join(dir.path, 'down'), down);
    await down.close();
    await writeFile(join(other.exports, 'reorder.csv'), orders.reorder(1).text);
    const r = await other.startWrapper().done;
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(
      /htorder-nightly: exit 3: the API could not be reached .*; nothing was decided; the next run retries safely/,
    );
  }, 60_000);

  it('an internal error (a bug) is mailed as one, told apart from an invalid input (exit 70)', async () => {
    const other = await cronFolder(join(dir.path, 'bug'), sandbox);
    await writeFile(join(other.exports, 'reorder.csv'), orders.reorder(1).text);
    const bug = await injectedBug(other.erp, 'command');
    const r = await other.startWrapper({ NODE_OPTIONS: `--import=${bug}` }).done;
    expect(r.code, r.stdout + r.stderr).toBe(70);
    expect(r.stdout).toMatch(
      /htorder-nightly: exit 70: internal error of htorder \(a bug\): what was sent is in the ledger/,
    );
    expect(r.stdout).toContain('htorder: internal error: Error: an injected bug');
  }, 60_000);
});
