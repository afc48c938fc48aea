import { mkdtemp, open, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { windowedRead } from '../../src/manifest/load-manifest.js';
import { windowedHarness } from '../support/pipeline-harness.js';
import { expectNoTemporariesBeside } from '../support/temp-files.js';

/**
 * `run` of a template CSV read a window at a time (forced here for a small file, with windows of
 * two jobs, so that jobs are read again from the file as the run goes) writes the reports the
 * whole read writes; a file changed under it sends nothing more.
 */

const harness = windowedHarness();

const ADDRESS = 'UPS Ground,Ana Ruiz,1 Main St,Austin,Texas,78701,United States';
const HEADER =
  'orderNumber,description,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity,comment';

/** `n` orders of two lines each, their rows scattered; among them a bad quantity, a shortened ZIP, order numbers alike in NFC. */
function orders(n: number): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const address = i === 3 ? ADDRESS.replace('78701', '8701') : ADDRESS;
    rows.push(`PO-${i},Order ${i},${address},Asset,A10001,${i === 5 ? 'ten' : 10 + i},first`);
  }
  for (let i = n - 1; i >= 0; i--) rows.push(`PO-${i},,,,,,,,,Asset,A10001,${20 + i},second`);
  rows.push(`Café,Accent,${ADDRESS},Asset,A10001,5,`);
  rows.push(`Cafe\u0301,Accent,${ADDRESS},Asset,A10001,5,`);
  return `${HEADER}\n${rows.join('\n')}\n`;
}

/** The three reports, the run's own times and the job numbers the sandbox gave (in the order creates arrive) aside. */
async function reportsOf(file: string): Promise<string[]> {
  const out: string[] = [];
  for (const suffix of ['.result.json', '.result.csv', '.errors.txt']) {
    const text = await readFile(`${file}${suffix}`, 'utf8').catch(() => '(none)');
    out.push(text.replace(/"(startedAt|finishedAt)": "[^"]*"/g, '"$1": T').replace(/\b7\d{5}\b/g, 'N'));
  }
  return out;
}

/** Another sandbox state and ledger for the same file, its reports gone. */
async function again(file: string): Promise<void> {
  await harness().sandbox.admin.reset();
  await harness().sandbox.admin.resetCalls();
  harness().stateDir = await mkdtemp(join(tmpdir(), 'htorder-state-'));
  for (const suffix of ['.result.json', '.result.csv', '.errors.txt']) await rm(`${file}${suffix}`, { force: true });
}

describe('run of a big template CSV, read a window at a time', () => {
  it('writes the same three reports as the whole read, and sends the same orders', async () => {
    const file = await harness().write('orders.csv', orders(12));
    const env = { HTORDER_CONCURRENCY: '1' };
    const whole = await harness().cli('run', [file], { env, partial: true });
    const wholeReports = await reportsOf(file);
    const wholeSent = await sentOrders();
    expect(wholeSent.length).toBeGreaterThan(5);

    await again(file);
    windowedRead.fromBytes = 0;
    windowedRead.windowJobs = 2;
    const windowed = await harness().cli('run', [file], { env, partial: true });
    expect(windowed.code).toBe(whole.code);
    const windowedReports = await reportsOf(file);
    expect(windowedReports[0]).toEqual(wholeReports[0]);
    expect(windowedReports[1]).toEqual(wholeReports[1]);
    expect(windowedReports[2]).toEqual(wholeReports[2]);
    expect(await sentOrders()).toEqual(wholeSent);
    // Its findings waited in a temporary file beside the input; nothing of it is left.
    await expectNoTemporariesBeside(file);
  });

  it('sends nothing more once the file changes under it, and says why', async () => {
    const file = await harness().write('orders.csv', orders(40));
    windowedRead.fromBytes = 0;
    windowedRead.windowJobs = 2;
    // Each create waits a little; the first one to arrive sees the file edited in place.
    await harness().sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'latency', latencyMs: 150, when: 'create' }]);
    const run = harness().cli('run', [file], { env: { HTORDER_CONCURRENCY: '1' }, partial: true });
    for (let i = 0; i < 400 && (await harness().sandbox.admin.jobs()).length === 0; i++) await sleep(25);
    const text = await readFile(file, 'utf8');
    const handle = await open(file, 'r+');
    // An order in the middle, whose window is let go before its turn comes: `PO-20,Order 20` becomes `PO-20,Order 99`, same size.
    const at = Buffer.byteLength(text.slice(0, text.indexOf('PO-20,Order 20') + 'PO-20,Order '.length));
    await handle.write(Buffer.from('99'), 0, 2, at);
    await handle.close();
    const { code, stderr } = await run;
    const jobs = await harness().sandbox.admin.jobs();
    const sent = jobs.map((j) => j.orderNumber);
    expect(sent.length).toBeGreaterThan(0);
    // 38 orders are valid (a bad quantity, two order numbers alike): the change stopped the rest.
    expect(sent.length).toBeLessThan(30);
    expect(sent).not.toContain('PO-20');
    expect(JSON.stringify(jobs.map((j) => j.request))).not.toContain('Order 99');
    expect(code).toBe(3);
    // Each job the change stopped says why, in the report and on the terminal.
    const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
    const po20 = report.jobs.find((j: { orderNumber: string }) => j.orderNumber === 'PO-20');
    expect(po20.status).toBe('failed');
    expect(JSON.stringify(po20.errors)).toMatch(/changed after it was read for its jobs/);
    expect(stderr).toMatch(/changed after it was read for its jobs/);
  });

  it.runIf(process.platform === 'linux')(
    'lets its file go when the API cannot be reached before the input is processed',
    async () => {
      const file = await harness().write('orders.csv', orders(12));
      windowedRead.fromBytes = 0;
      windowedRead.windowJobs = 2;
      // Nobody answers on port 9: the token request fails while the input is read and checked.
      const nobody = { HTORDER_BASE_URL: 'http://127.0.0.1:9', HTORDER_AUTH_URL: 'http://127.0.0.1:9' };
      const { code, stderr } = await harness().cli('run', [file], { env: nobody, partial: true });
      expect(code, stderr).toBe(3);
      // The file is let go once its read is done, which may end after the run's answer.
      await expect.poll(() => descriptorsOf(file), { timeout: 2000, interval: 20 }).toBe(0);
      // Nor its findings' temporary file (removed as the file is let go, without waiting for it).
      await expectNoTemporariesBeside(file);
    },
  );
});

/** How many of this process's open descriptors are on `file` (Linux: /proc/self/fd). */
async function descriptorsOf(file: string): Promise<number> {
  const target = await realpath(file);
  const links = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  return links.filter((link) => link === target).length;
}

/** What the sandbox was sent, by order number. */
async function sentOrders(): Promise<unknown[]> {
  const jobs = await harness().sandbox.admin.jobs();
  return jobs.map((j) => [j.orderNumber, j.request]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
