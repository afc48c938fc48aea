import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_STATUSES } from '../../src/report/model.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startDashboard, type Dashboard } from '../../src/ui/dashboard.js';
import type { InputEvent } from '../../src/watch/events.js';
import { CLI, requireDist } from '../support/dist.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor, type RunningWatch } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';
import { browserMissing, launch, type Browser } from './browser.js';

/**
 * What the dashboard says is what happened, in a real headless Chromium: a file dropped again
 * adds no spend and no submitted job, a planned input is not shown as ordered, statuses are the
 * CLI's words, a provider status that waits on the customer stands out, amounts carry their
 * currency, dates read as dates, and every page fits a 420 px phone.
 */
const missing = await browserMissing();
if (missing !== undefined) {
  const notice = `the dashboard's browser tests (${import.meta.filename}) need a Chromium that starts here; ${missing}.`;
  if (process.env.CI) throw new Error(notice);
  console.warn(`SKIPPED: ${notice}`);
}
const inBrowser = missing === undefined ? describe : describe.skip;

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;
let browser: Browser;

const htorder = (args: string[], more: Record<string, string> = {}) =>
  promisify(execFile)(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env, ...more },
    timeout: 30_000,
  });

const today = (): string => new Date().toISOString().slice(0, 10);

/** The cells of today's row of the days page, by their series (`job submitted`, `spend`, …). */
async function todayCells(page: Page, ui: string): Promise<Record<string, string>> {
  await page.goto(`${ui}days`);
  const cells = page.locator(`#days tr[data-day="${today()}"] td[data-series]`);
  const out: Record<string, string> = {};
  for (const c of await cells.all())
    out[(await c.getAttribute('data-series')) as string] = (await c.textContent()) ?? '';
  return out;
}

beforeAll(async () => {
  requireDist();
  state = await tempDir('htorder-ui-truth-state-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await sandbox?.close();
  await state?.remove();
});

inBrowser('a drop folder whose file is dropped again', () => {
  let drop: Awaited<ReturnType<typeof tempDir>>;
  let watch: RunningWatch;
  let ui: string;
  const finished = (name: string): number =>
    watch.events().filter((e): e is InputEvent => e.kind === 'input' && e.name === name && e.phase === 'done').length;

  beforeAll(async () => {
    drop = await tempDir('htorder-ui-truth-drop-');
    watch = await startWatch({ target: drop.path, ui: true }, env);
    ui = new URL('/', watch.uiUrl).href;
    const page = await browser.context.newPage();
    await page.goto(watch.uiUrl as string);
    await page.close();
  });
  afterAll(async () => {
    await watch?.stop();
    await drop?.remove();
  });

  it('counts each submission once: the same file again adds no spend and no submitted job', async () => {
    const text = manifest('AGAIN', 3);
    await writeFile(join(drop.path, 'week.yaml'), text);
    await waitFor(() => (finished('week.yaml') === 1 ? true : undefined), 'week.yaml to be done', 30_000);
    const page = await browser.context.newPage();
    try {
      const before = await todayCells(page, ui);
      expect(before['job submitted']).toBe('3');
      expect(before.spend).toMatch(/^[\d,]+\.\d\d [A-Z]{3}$/);

      await writeFile(join(drop.path, 'week.yaml'), text);
      await waitFor(() => (finished('week.yaml') === 2 ? true : undefined), 'week.yaml again', 30_000);
      // The second report says the jobs were already submitted: the same jobs, not new ones.
      await page.goto(ui);
      // The second copy in done/ takes a timestamped name (week.2026…Z.yaml).
      const rows = page.locator('#inputs tbody tr[data-id^="done/week."]');
      await expect.poll(() => rows.count()).toBe(2);
      expect(await page.locator('#inputs td[data-label="already-submitted"]', { hasText: '3' }).count()).toBe(1);

      const after = await todayCells(page, ui);
      expect(after['job submitted']).toBe('3');
      expect(after['job already-submitted']).toBe('');
      expect(after.spend).toBe(before.spend);
      // In all, too, and each job once among the orders in flight.
      await page.goto(`${ui}days`);
      expect(await page.locator('main > p').first().textContent()).toContain(`${before.spend} in all`);
      await page.goto(`${ui}orders`);
      const jobs = await page
        .locator('#orders tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job')));
      expect(jobs).toHaveLength(3);
      expect(new Set(jobs).size).toBe(3);
    } finally {
      await page.close();
    }
  }, 90_000);
});

inBrowser('a folder of runs and plans', () => {
  let folder: Awaited<ReturnType<typeof tempDir>>;
  let dashboard: Dashboard;
  let onHold: number;

  beforeAll(async () => {
    folder = await tempDir('htorder-ui-truth-runs-');
    const ordered = join(folder.path, 'ordered.yaml');
    await writeFile(
      ordered,
      manifest([
        {
          orderNumber: 'TRUTH-1',
          items: '      - { itemType: Asset, code: A10001, quantity: 50 }\n',
          dateDue: '2026-12-01',
        },
        { orderNumber: 'TRUTH-2', items: '      - { itemType: Asset, code: A10001, quantity: 60 }\n' },
      ]),
    );
    await htorder(['run', ordered]);
    await writeFile(join(folder.path, 'planned.yaml'), manifest('PLANNED', 2));
    await htorder(['plan', join(folder.path, 'planned.yaml')]);
    const report = JSON.parse(readFileSync(`${ordered}.result.json`, 'utf8'));
    onHold = report.jobs[0].jobNumber as number;
    await sandbox.admin.advanceJob(onHold, 'On Hold');
    await htorder(['track', folder.path]);
    // The same orders once more, by another name: the ledger says already-submitted.
    await copyFile(ordered, join(folder.path, 'resent.yaml'));
    await htorder(['run', join(folder.path, 'resent.yaml')]);
    dashboard = await startDashboard({ root: folder.path, port: 0, host: '127.0.0.1' });
    const page = await browser.context.newPage();
    await page.goto(dashboard.openUrl);
    await page.close();
  }, 120_000);
  afterAll(async () => {
    await dashboard?.close();
    await folder?.remove();
  });

  it('records the currency in result.json and shows every amount with it', async () => {
    const report = JSON.parse(readFileSync(join(folder.path, 'ordered.yaml.result.json'), 'utf8'));
    const currency = report.jobs[0].currency as string;
    expect(currency).toMatch(/^[A-Z]{3}$/);
    const page = await browser.context.newPage();
    try {
      await page.goto(dashboard.url);
      const spend = await page
        .locator('#inputs tr', { hasText: 'ordered.yaml' })
        .locator('td[data-label="Spend"]')
        .textContent();
      const total = report.jobs.reduce((n: number, j: { totalJobCost: number }) => n + j.totalJobCost, 0) as number;
      expect(spend).toBe(
        `${total.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}`,
      );
      // The input sent again spent nothing: its jobs are ordered.yaml's.
      expect(
        await page.locator('#inputs tr', { hasText: 'resent.yaml' }).locator('td[data-label="Spend"]').textContent(),
      ).toBe('–');
      const estimated = await page
        .locator('#inputs tr', { hasText: 'planned.yaml' })
        .locator('td[data-label="Estimated"]')
        .textContent();
      expect(estimated).toMatch(new RegExp(`^[\\d,]+\\.\\d\\d ${currency}$`));
      await page.goto(`${dashboard.url}orders`);
      expect(await page.locator(`#orders tr[data-job="${onHold}"] td[data-label="Cost"]`).textContent()).toMatch(
        new RegExp(` ${currency}$`),
      );
    } finally {
      await page.close();
    }
  });

  it('shows a planned input as planned, not as a green done', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(dashboard.url);
      const planned = page.locator('#inputs tr', { hasText: 'planned.yaml' });
      expect(await planned.locator('td[data-label="Status"] .st').textContent()).toBe('planned');
      const look = (row: typeof planned) =>
        row
          .locator('td[data-label="Status"] .st')
          .evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).backgroundColor);
      const ordered = page.locator('#inputs tr', { hasText: 'ordered.yaml' });
      expect(await ordered.locator('td[data-label="Status"] .st').textContent()).toBe('done');
      expect(await look(planned)).not.toBe(await look(ordered));
      // Filtered by it, too.
      await page.goto(`${dashboard.url}?status=planned`);
      expect(await page.locator('#inputs tbody tr').count()).toBe(1);
    } finally {
      await page.close();
    }
  });

  it("uses the CLI's status names, every one of them", async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(dashboard.url);
      const heads = await page.locator('#inputs thead th').allTextContents();
      for (const s of JOB_STATUSES) expect(heads).toContain(s);
      expect(heads).not.toContain('held');
      expect(heads).not.toContain('already');
      const resent = page.locator('#inputs tr', { hasText: 'resent.yaml' });
      expect(await resent.locator('td[data-label="already-submitted"]').textContent()).toBe('2');
      await page.goto(`${dashboard.url}days`);
      const dayHeads = await page.locator('#days thead th').allTextContents();
      for (const s of JOB_STATUSES) expect(dayHeads).toContain(`jobs ${s}`);
    } finally {
      await page.close();
    }
  });

  it('makes a provider status that waits on the customer stand out, first', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${dashboard.url}orders`);
      const first = page.locator('#orders tbody tr').first();
      expect(await first.getAttribute('data-job')).toBe(String(onHold));
      expect(await first.locator('.st').textContent()).toBe('On Hold');
      expect(await first.locator('.needs-action').textContent()).toBe('needs you');
      const other = page.locator('#orders tbody tr').nth(1);
      const bg = (row: typeof first) =>
        row.locator('.st').evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).backgroundColor);
      expect(await bg(first)).not.toBe(await bg(other));
      expect(await page.locator('.needs-action-note').textContent()).toContain('1 job waits on you');
    } finally {
      await page.close();
    }
  });

  it('shows dates as dates', async () => {
    const page = await browser.context.newPage();
    try {
      for (const path of ['', 'orders', 'days', `input?id=${encodeURIComponent('drop/ordered.yaml')}`]) {
        await page.goto(`${dashboard.url}${path}`);
        expect(await page.locator('main').textContent(), path).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
      }
      await page.goto(`${dashboard.url}orders`);
      const due = await page.locator(`#orders tr[data-job="${onHold}"] td[data-label="Due"]`).textContent();
      expect(due).toMatch(/^\d{4}-\d\d-\d\d$/);
      const checked = await page
        .locator(`#orders tr[data-job="${onHold}"] td[data-label="Checked (UTC)"]`)
        .textContent();
      expect(checked).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d$/);
    } finally {
      await page.close();
    }
  });

  it('fits a 420 px phone: nothing scrolls sideways, no cell is cut off', async () => {
    const phone = await browser.context.newPage();
    await phone.setViewportSize({ width: 420, height: 900 });
    try {
      for (const path of ['', 'orders', 'days', `input?id=${encodeURIComponent('drop/ordered.yaml')}`]) {
        await phone.goto(`${dashboard.url}${path}`);
        const fit = (await phone.evaluate(`(() => {
          const cells = [...document.querySelectorAll('td, th')].filter((c) => c.getClientRects().length > 0);
          return {
            page: document.documentElement.scrollWidth,
            cells: cells.length,
            wide: cells.filter((c) => c.getBoundingClientRect().right > 420 || c.scrollWidth > c.clientWidth + 1)
              .map((c) => c.getAttribute('data-label') + ': ' + c.textContent),
          };
        })()`)) as { page: number; cells: number; wide: string[] };
        expect(fit.cells, path).toBeGreaterThan(0);
        expect(fit.wide, path).toEqual([]);
        expect(fit.page, path).toBeLessThanOrEqual(420);
      }
    } finally {
      await phone.close();
    }
  });
});

inBrowser('inputs whose jobs wait for approval', () => {
  /** A limit every job of the tests' manifests is over. */
  const LIMIT = { HTORDER_MAX_JOB_COST: '1' };
  let drop: Awaited<ReturnType<typeof tempDir>>;
  let runs: Awaited<ReturnType<typeof tempDir>>;
  let watch: RunningWatch;
  let folderUi: Dashboard;

  beforeAll(async () => {
    drop = await tempDir('htorder-ui-held-drop-');
    runs = await tempDir('htorder-ui-held-runs-');
    watch = await startWatch({ target: drop.path, ui: true }, { ...env, ...LIMIT });
    await writeFile(join(runs.path, 'nightly.yaml'), manifest('NIGHTLY', 2));
    // Exit 4: nothing failed, its jobs wait for approval.
    await expect(htorder(['run', join(runs.path, 'nightly.yaml')], LIMIT)).rejects.toMatchObject({ code: 4 });
    folderUi = await startDashboard({ root: runs.path, port: 0, host: '127.0.0.1' });
    for (const link of [watch.uiUrl as string, folderUi.openUrl]) {
      const page = await browser.context.newPage();
      await page.goto(link);
      await page.close();
    }
  }, 60_000);
  afterAll(async () => {
    await folderUi?.close();
    await watch?.stop();
    await drop?.remove();
    await runs?.remove();
  });

  it("a watcher's held file shows as held, with its amount, currency and reasons, live", async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(new URL('/', watch.uiUrl).href);
      await writeFile(join(drop.path, 'big.yaml'), manifest('BIG', 2));
      await waitFor(
        () =>
          watch.events().some((e) => e.kind === 'input' && e.name === 'big.yaml' && e.phase === 'held') || undefined,
        'big.yaml to be held',
        30_000,
      );
      const row = page.locator('#inputs tr[data-id="held/big.yaml"]');
      await row.locator('.st-held').waitFor({ timeout: 5_000 });
      const reasons = (await row.locator('.reasons').textContent()) ?? '';
      expect(reasons).toMatch(/^2 jobs wait for approval, [\d,]+\.\d\d [A-Z]{3}: BIG-1: .*over maxJobCost/);
      // Shown as waiting on someone, not as the grey of a file not yet taken.
      const look = (cls: string) =>
        page
          .locator(`#inputs .counts ${cls}, p.counts ${cls}`)
          .first()
          .evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).backgroundColor);
      expect(await look('.st-held')).not.toBe(await look('.st-waiting'));
      expect(await page.locator('p.counts .st-held').textContent()).toBe('held 1');
      expect(await page.locator('.held-summary').textContent()).toMatch(
        /^1 input waits for approval: 2 jobs, [\d,]+\.\d\d [A-Z]{3}\./,
      );
      expect(await page.locator('#inputs tr', { hasText: 'No reports yet' }).count()).toBe(0);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('a run that exited 4 shows as held, not failed', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(folderUi.url);
      const row = page.locator('#inputs tr', { hasText: 'nightly.yaml' });
      expect(await row.locator('td[data-label="Status"] .st').textContent()).toBe('held');
      expect(await row.locator('.reasons').textContent()).toMatch(/^2 jobs wait for approval/);
      expect(await page.locator('p.counts .st-failed').textContent()).toBe('failed 0');
    } finally {
      await page.close();
    }
  });
});
