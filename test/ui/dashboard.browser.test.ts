import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InputEvent } from '../../src/watch/events.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startDashboard } from '../../src/ui/dashboard.js';
import { CLI, ROOT, requireDist } from '../support/dist.js';
import { tempDir } from '../support/temp-files.js';
import { sandboxWithEnv, startWatch, waitFor, type RunningWatch } from '../support/watch-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';
import { browserMissing, launch, type Browser } from './browser.js';

/**
 * Without a browser that starts here these tests fail in CI (CI set) and are skipped elsewhere,
 * with a notice saying how to run them.
 */
const missing = await browserMissing();
if (missing !== undefined) {
  const notice =
    `the dashboard's browser tests (${import.meta.filename}) need a Chromium that starts here; ${missing}. ` +
    'To run them: `npm ci` (it brings the browser of @sparticuz/chromium), or install one ' +
    '(apt-get install chromium) and set CHROMIUM_PATH=/usr/bin/chromium.';
  if (process.env.CI) throw new Error(notice);
  console.warn(`SKIPPED: ${notice}`);
}
const inBrowser = missing === undefined ? describe : describe.skip;

/**
 * The dashboard in a real headless Chromium, against a real watcher (`watch --ui`, the same
 * runWatch the CLI calls) on a real drop folder, with the sandbox as the API. The same run
 * writes the screenshots of docs/ui.md (docs/images/ui-*.png).
 */

/**
 * Screenshots go into docs/images only when asked (UPDATE_SCREENSHOTS=1); otherwise into a
 * temporary folder, so a test run never changes the work tree (the pages show today's dates and
 * times, which no two runs share).
 */
const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';
const DOC_IMAGES = join(ROOT, 'docs/images');
let scratch: Awaited<ReturnType<typeof tempDir>>;
const shot = (name: string): string => join(UPDATE ? DOC_IMAGES : scratch.path, name);
/** How long the page may take to show what the watcher did: the push, one fetch, some slack. */
const LIVE_MS = 3_000;

let sandbox: Sandbox;
let env: Record<string, string>;
let state: Awaited<ReturnType<typeof tempDir>>;
let drop: Awaited<ReturnType<typeof tempDir>>;
let watch: RunningWatch;
let browser: Browser;
let ui: string;

const phaseAt = (name: string, phase: string): number | undefined =>
  watch.events().find((e): e is InputEvent => e.kind === 'input' && e.name === name && e.phase === phase)?.at;

/** A CSV whose row 3 has a quantity that is not a number. */
function badCsv(): string {
  const lines = readFileSync(join(ROOT, 'samples/csv/orders.csv'), 'utf8').split('\n');
  lines[2] = (lines[2] ?? '').replace('A10001,25,', 'A10001,abc,');
  return lines.join('\n');
}

beforeAll(async () => {
  requireDist();
  state = await tempDir('htorder-ui-state-');
  drop = await tempDir('htorder-ui-drop-');
  scratch = await tempDir('htorder-ui-shots-');
  ({ sandbox, env } = await sandboxWithEnv(state.path));
  watch = await startWatch({ target: drop.path, ui: true }, env);
  // The watcher hands out the link with its token; opening it once keeps the token in a cookie.
  const open = watch.uiUrl as string;
  ui = new URL('/', open).href;
  browser = await launch();
  const first = await browser.context.newPage();
  expect((await first.goto(open))?.status()).toBe(200);
  await first.close();
});

afterAll(async () => {
  await browser?.close();
  await watch?.stop();
  await sandbox?.close();
  await drop?.remove();
  await state?.remove();
  // Every page was photographed, wherever it went.
  for (const name of ['ui-inputs.png', 'ui-input.png', 'ui-orders.png', 'ui-days.png'])
    expect(statSync(shot(name)).size, name).toBeGreaterThan(10_000);
  await scratch?.remove();
});

inBrowser('the dashboard of a watched drop folder, in a browser', () => {
  it("keeps its token out of the log and hands the link to the watcher's user only", () => {
    const ready = watch.logs().find((l) => 'uiLink' in l) ?? {};
    const token = new URL(watch.uiUrl as string).searchParams.get('token') as string;
    expect(JSON.stringify(watch.logs())).not.toContain(token);
    const link = ready.uiLink as string;
    expect(readFileSync(link, 'utf8')).toBe(`${watch.uiUrl}\n`);
    expect(statSync(link).mode & 0o777).toBe(0o600);
  });

  it('shows a dropped file as processing, then done, without a reload', async () => {
    // Slow creates keep the input in processing long enough for a person (and this test) to see it.
    await sandbox.admin.setFaults([{ route: 'POST /Jobs', when: 'create', kind: 'latency', latencyMs: 1500 }]);
    const page = await browser.context.newPage();
    try {
      await page.goto(ui);
      await page.locator('h1').waitFor();
      // Evaluated in the page (this project's types have no DOM).
      await page.evaluate('window.stayed = true');
      await writeFile(join(drop.path, 'spring.yaml'), manifest('SPRING', 2));
      const row = page.locator('#inputs tr', { hasText: 'spring.yaml' });
      await waitFor(() => phaseAt('spring.yaml', 'processing'), 'the watcher to take spring.yaml');
      await row.locator('.st-processing').waitFor({ timeout: LIVE_MS });
      await waitFor(() => phaseAt('spring.yaml', 'done'), 'spring.yaml to be done', 30_000);
      await row.locator('.st-done').waitFor({ timeout: LIVE_MS });
      expect(await row.locator('td').nth(3).textContent()).toBe('2');
      // The same page, updated in place: no reload happened.
      expect(await page.evaluate('window.stayed')).toBe(true);
    } finally {
      await sandbox.admin.clearFaults();
      await page.close();
    }
  }, 60_000);

  it('shows a failed file with each error beside its row and the source line', async () => {
    await writeFile(join(drop.path, 'kit.csv'), badCsv());
    await waitFor(() => phaseAt('kit.csv', 'failed'), 'kit.csv to fail', 30_000);
    const page = await browser.context.newPage();
    try {
      await page.goto(ui);
      await page.locator('#inputs tr', { hasText: 'kit.csv' }).locator('.st-failed').waitFor({ timeout: LIVE_MS });
      await page.locator('#inputs a', { hasText: 'kit.csv' }).click();
      await page.locator('h1.input-name').waitFor();
      const row3 = page.locator('tr.line[data-row="3"]');
      await expect(row3.locator('.error .msg').first().textContent()).resolves.toMatch(/integer/);
      await expect(row3.locator('pre.src').first().textContent()).resolves.toContain('A10001,abc,');
      // The other rows carry no error of row 3.
      for (const other of ['2', '4', '5', '6', '7']) {
        const msgs = await page.locator(`tr.line[data-row="${other}"] .error .msg`).allTextContents();
        expect(msgs.join(' ')).not.toMatch(/integer/);
      }
      // The three reports download, named after the input.
      const links = await page.locator('a.download').allTextContents();
      expect(links).toEqual(['result.json', 'result.csv', 'errors.txt']);
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('a.download', { hasText: 'errors.txt' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('kit.csv.errors.txt');
      expect(readFileSync((await download.path()) as string, 'utf8')).toContain('kit.csv:3: quantity');
      await page.screenshot({ path: shot('ui-input.png'), fullPage: true });
    } finally {
      await page.close();
    }
  }, 60_000);

  it('renders an order number holding <script> as text, and runs no script from it', async () => {
    const evil = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">';
    await writeFile(
      join(drop.path, 'evil.yaml'),
      manifest([{ orderNumber: JSON.stringify(evil), items: ITEMS.reorder }]),
    );
    await waitFor(() => phaseAt('evil.yaml', 'done') ?? phaseAt('evil.yaml', 'failed'), 'evil.yaml to finish', 30_000);
    const page = await browser.context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => violations.push(m.text()));
    try {
      await page.goto(ui);
      await page.locator('#inputs a', { hasText: 'evil.yaml' }).click();
      await page.locator('tbody.job .order').first().waitFor();
      expect(await page.locator('tbody.job .order').first().textContent()).toBe(evil);
      expect(await page.evaluate('window.pwned')).toBeUndefined();
      // Only the dashboard's own script element exists; no image was made from the name.
      expect(await page.locator('script').count()).toBe(1);
      expect(await page.locator('main img').count()).toBe(0);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('shows orders in flight with what htorder track wrote, and the last days', async () => {
    const report = JSON.parse(readFileSync(join(drop.path, 'done/spring.yaml.result.json'), 'utf8'));
    const first = report.jobs[0].jobNumber as number;
    await sandbox.admin.advanceJob(first, 'Dispatched');
    // Asynchronously: the sandbox answering it runs in this process.
    await promisify(execFile)(process.execPath, [CLI, 'track', join(drop.path, 'done')], {
      env: { ...process.env, ...env },
      timeout: 30_000,
    });
    const page = await browser.context.newPage();
    try {
      await page.goto(ui);
      await page.screenshot({ path: shot('ui-inputs.png') });
      await page.goto(`${ui}orders`);
      const row = page.locator(`#orders tr[data-job="${first}"]`);
      await expect(row.locator('.st').textContent()).resolves.toBe('Dispatched');
      expect(await page.locator('#orders tbody tr').count()).toBeGreaterThanOrEqual(2);
      // A signed invoice link is never shown: not its query string, not the link.
      expect(await page.content()).not.toMatch(/X-Amz|Signature=|sig=/i);
      await page.screenshot({ path: shot('ui-orders.png'), fullPage: true });

      await page.goto(`${ui}days`);
      const today = new Date().toISOString().slice(0, 10);
      const todayRow = page.locator('#days tr', { hasText: today });
      // spring.yaml and evil.yaml done (or evil failed), kit.csv failed: three inputs today.
      const cells = await todayRow.locator('td.n').allTextContents();
      expect(cells.slice(0, 4).reduce((n, c) => n + Number(c || 0), 0)).toBe(3);
      expect(await page.locator('svg.chart').count()).toBe(3);
      await page.screenshot({ path: shot('ui-days.png'), fullPage: true });
    } finally {
      await page.close();
    }
  }, 60_000);
});

inBrowser('a folder without a watcher, in a browser', () => {
  it('shows a file dropped by hand and a report rewritten in place, without a reload', async () => {
    const folder = await tempDir('htorder-ui-plain-');
    const LIVE = 200; // looks at the folders' times every 200 ms, lists them at least every 2 s
    const report = (jobs: number): string =>
      JSON.stringify({
        reportVersion: 1,
        command: 'run',
        startedAt: '2026-11-21T06:00:00.000Z',
        finishedAt: '2026-11-21T06:00:01.500Z',
        summary: { jobs, items: jobs, errors: 0, warnings: 0 },
        errors: [],
        warnings: [],
        jobs: Array.from({ length: jobs }, (_, i) => ({ index: i, orderNumber: `PO-${i}`, status: 'submitted' })),
      });
    await writeFile(join(folder.path, 'kept.yaml'), manifest('KEPT', 1));
    await writeFile(join(folder.path, 'kept.yaml.result.json'), report(1));
    // The folder unchanged for an hour: only a relisting sees a report rewritten in place.
    const past = new Date(Date.now() - 3_600_000);
    await utimes(folder.path, past, past);
    const dashboard = await startDashboard({ root: folder.path, port: 0, host: '127.0.0.1', liveMs: LIVE });
    const page = await browser.context.newPage();
    try {
      await page.goto(dashboard.openUrl);
      const kept = page.locator('#inputs tr', { hasText: 'kept.yaml' });
      expect(await kept.locator('td').nth(3).textContent()).toBe('1');
      await page.evaluate('window.stayed = true');
      // Rewritten in place (truncated and written, as a tool that does not rename might): the
      // folder's time stays, the periodic relisting shows it.
      await writeFile(join(folder.path, 'kept.yaml.result.json'), report(3));
      await expect.poll(() => kept.locator('td').nth(3).textContent(), { timeout: 10 * LIVE + LIVE_MS }).toBe('3');
      // A file dropped by hand moves the folder's time: shown at the next look.
      await writeFile(join(folder.path, 'new.yaml'), manifest('NEW', 1));
      await page.locator('#inputs tr', { hasText: 'new.yaml' }).locator('.st-waiting').waitFor({ timeout: LIVE_MS });
      expect(await page.evaluate('window.stayed')).toBe(true);
    } finally {
      await page.close();
      await dashboard.close();
      await folder.remove();
    }
  }, 60_000);
});

inBrowser('remote access', () => {
  let guarded: RunningWatch;
  let guardedDrop: Awaited<ReturnType<typeof tempDir>>;
  const TOKEN = 'correct-horse-battery-staple';

  beforeAll(async () => {
    guardedDrop = await tempDir('htorder-ui-guarded-');
    await mkdir(join(guardedDrop.path, 'done'));
    guarded = await startWatch({ target: guardedDrop.path, ui: true }, { ...env, HTORDER_UI_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await guarded?.stop();
    await guardedDrop?.remove();
  });

  it('refuses a request without the token, in the browser and from a script', async () => {
    const url = new URL('/', guarded.uiUrl).href;
    // A browser without the token (none, then a wrong one) gets the 401 and shows nothing of the dashboard.
    for (const credentials of [undefined, { username: 'anyone', password: 'wrong' }]) {
      const b = await launch(credentials ? { httpCredentials: credentials } : {});
      try {
        const p = await b.context.newPage();
        const outcome = await p.goto(url).then(
          (res) => `status ${res?.status()}`,
          (err: Error) => err.message,
        );
        // Headless Chromium turns a refused basic-auth challenge into this error instead of a page.
        expect(outcome).toMatch(/status 401|ERR_INVALID_AUTH_CREDENTIALS/);
        expect(await p.locator('main').count()).toBe(0);
      } finally {
        await b.close();
      }
    }
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(`${url}events`)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    const withPrompt = await launch({ httpCredentials: { username: 'anyone', password: TOKEN } });
    try {
      const p = await withPrompt.context.newPage();
      const res = await p.goto(url);
      expect(res?.status()).toBe(200);
      expect(await p.locator('h1').textContent()).toBe('Inputs');
    } finally {
      await withPrompt.close();
    }
  }, 60_000);

  it('tells a browser without the token where the link is: the file and the command', async () => {
    const { port } = new URL(watch.uiUrl as string);
    const file = watch.logs().find((l) => 'uiLink' in l)?.uiLink as string;
    expect(file).toMatch(new RegExp(`/ui/${port}\\.url$`));
    const b = await launch();
    try {
      const p = await b.context.newPage();
      const res = await p.goto(new URL('/', watch.uiUrl).href);
      expect(res?.status()).toBe(401);
      const text = (await p.locator('body').textContent()) ?? '';
      expect(text).toContain('Open the link htorder watch --ui printed when it started');
      expect(text).toContain(`the file ${file}, readable by the watcher's user only (cat ${file})`);
    } finally {
      await b.close();
    }
  });

  it('with the token it generated, answers loopback host names only (no DNS rebinding)', async () => {
    const { port, searchParams } = new URL(watch.uiUrl as string);
    const authorization = `Bearer ${searchParams.get('token')}`;
    const status = (host: string): Promise<number> =>
      new Promise((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/', headers: { host, authorization } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
    expect(await status(`127.0.0.1:${port}`)).toBe(200);
    expect(await status(`localhost:${port}`)).toBe(200);
    expect(await status(`attacker.example:${port}`)).toBe(403);
  });
});
