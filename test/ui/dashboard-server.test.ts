import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { SCAN_LIMITS } from '../../src/ui/drop-inputs.js';
import { VIEW_LIMITS } from '../../src/ui/report-view.js';
import { MAX_INPUT_ROWS } from '../../src/ui/pages/inputs-page.js';
import { startDashboard, type Dashboard } from '../../src/ui/dashboard.js';
import { tempDirPerTest } from '../support/temp-files.js';

/** The dashboard's server against hostile folders and requests (the browser tests cover the pages). */

const LAYOUT = { processing: 'processing', done: 'done', failed: 'failed' };
let running: Dashboard | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function folder(): Promise<string> {
  const root = await tempDirPerTest('htorder-ui-');
  for (const d of Object.values(LAYOUT)) await mkdir(join(root, d));
  return root;
}

async function serve(root: string, token?: string): Promise<string> {
  running = await startDashboard({ root, layout: LAYOUT, port: 0, host: '127.0.0.1', token });
  return running.url;
}

/** The running dashboard's token (the one it generated, unless the test set one). */
const tokenOf = (d: Dashboard): string => new URL(d.openUrl).searchParams.get('token') ?? '';
const bearer = (): Record<string, string> => ({ authorization: `Bearer ${tokenOf(running as Dashboard)}` });
/** A request as a script with the token makes it. */
const get = (url: string, init: RequestInit = {}): Promise<Response> =>
  fetch(url, { ...init, headers: { ...bearer(), ...(init.headers as Record<string, string> | undefined) } });

const REPORT = (orderNumber: unknown) =>
  JSON.stringify({
    reportVersion: 1,
    command: 'watch',
    startedAt: '2026-11-21T06:00:00.000Z',
    finishedAt: '2026-11-21T06:00:01.500Z',
    summary: { jobs: 1, items: 1, errors: 0, warnings: 0 },
    errors: [],
    warnings: [],
    jobs: [{ index: 0, orderNumber, status: 'submitted', jobNumber: 700001, totalJobCost: 12.5, items: [] }],
  });

describe('the dashboard server', () => {
  it('refuses to bind anything but loopback without a token, before listening', async () => {
    const root = await folder();
    await expect(startDashboard({ root, port: 0, host: '0.0.0.0' })).rejects.toThrow(UsageError);
    await expect(startDashboard({ root, port: 0, host: '0.0.0.0' })).rejects.toThrow(/uiToken/);
    // Loopback is what htorder trusts for plain http too: 127.0.0.1, localhost, ::1.
    await expect(startDashboard({ root, port: 0, host: '127.0.0.2' })).rejects.toThrow(/uiToken/);
  });

  it('sends its security headers and takes no method but GET and HEAD', async () => {
    const url = await serve(await folder());
    const res = await get(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await get(url, { method: 'POST', body: 'x' })).status).toBe(405);
    expect((await get(`${url}static/app.js`)).headers.get('content-type')).toContain('javascript');
  });

  it('refuses a GET that carries a body, and a Host header that does not name loopback', async () => {
    const url = new URL(await serve(await folder()));
    const get = (headers: Record<string, string>): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = request(
          { host: url.hostname, port: url.port, path: '/', headers: { ...bearer(), ...headers } },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => {
              body += c;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await get({ 'content-length': '0' })).toEqual({ status: 413, body: 'no request bodies here\n' });
    const rebound = await get({ host: `attacker.example:${url.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('loopback host names only');
    expect((await get({})).status).toBe(200);
  });

  it('shows a report with fields of the wrong types, one that is not JSON and one too large, without failing', async () => {
    const root = await folder();
    await writeFile(
      join(root, 'done/odd.yaml.result.json'),
      JSON.stringify({ jobs: [{ orderNumber: 7, items: 'x' }, null], summary: 'no' }),
    );
    await writeFile(join(root, 'done/broken.yaml.result.json'), '{"jobs": [');
    await writeFile(join(root, 'done/huge.yaml.result.json'), Buffer.alloc(SCAN_LIMITS.reportBytes + 1, 0x20));
    const url = await serve(root);
    const page = await (await get(url)).text();
    expect(page).toContain('odd.yaml');
    expect(page).toContain('the report is not valid JSON');
    expect(page).toContain(`larger than ${SCAN_LIMITS.reportBytes / 1024 / 1024} MiB`);
    expect((await get(`${url}input?id=done%2Fodd.yaml`)).status).toBe(200);
  });

  it('serves only reports it listed: no path from the request, no link followed', async () => {
    const root = await folder();
    const outside = await tempDirPerTest('htorder-ui-outside-');
    await writeFile(join(outside, 'secret.txt'), 'TOP SECRET');
    await writeFile(join(root, 'done/a.yaml'), 'version: 1\n');
    await writeFile(join(root, 'done/a.yaml.result.json'), REPORT('A-1'));
    // A link planted in done/ with a report's name, pointing outside the folder.
    await symlink(join(outside, 'secret.txt'), join(root, 'done/a.yaml.result.csv'));
    await symlink(join(outside, 'secret.txt'), join(root, 'done/b.yaml.result.json'));
    const url = await serve(root);
    const ok = await get(`${url}file?id=done%2Fa.yaml&kind=json`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-disposition')).toContain('filename="a.yaml.result.json"');
    expect(await ok.text()).toContain('A-1');
    for (const path of [
      'file?id=done%2Fa.yaml&kind=csv',
      'file?id=done%2Fb.yaml&kind=json',
      'file?id=done%2F..%2F..%2Fetc%2Fpasswd&kind=json',
      'file?id=..%2Fsecret.txt&kind=json',
      'file?id=done%2Fa.yaml&kind=..%2F..%2Fsecret.txt',
      'input?id=done%2F..%2F..%2Fsecret.txt',
      'done/a.yaml.result.json',
    ]) {
      const res = await get(`${url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('TOP SECRET');
    }
  });

  it('ignores a layout folder that is a link out of the drop folder', async () => {
    const root = await tempDirPerTest('htorder-ui-');
    const outside = await tempDirPerTest('htorder-ui-outside-');
    await writeFile(join(outside, 'x.yaml.result.json'), REPORT('OUTSIDE-1'));
    await symlink(outside, join(root, 'done'));
    const url = await serve(root);
    expect(await (await get(url)).text()).not.toContain('x.yaml');
  });

  it("an input's page counts jobs, lines, errors and warnings in words people read: 1 job, 0 errors", async () => {
    const root = await folder();
    await writeFile(join(root, 'done/one.yaml.result.json'), REPORT('PO-1'));
    const url = await serve(root);
    const list = await (await get(url)).text();
    const link = /href="\/(input\?id=[^"]+)"/.exec(list)?.[1];
    expect(link).toBeDefined();
    const page = await (await get(`${url}${(link ?? '').replaceAll('&amp;', '&')}`)).text();
    expect(page).toMatch(/1 job, 0 lines, 0 errors, 0 warnings/);
  });

  it('escapes what users chose: an order number and a file name are text, never markup', async () => {
    const root = await folder();
    await writeFile(join(root, 'done/"><b>x<!--.yaml.result.json'), REPORT('<script>alert(1)</script>'));
    const url = await serve(root);
    const list = await (await get(url)).text();
    expect(list).not.toContain('<b>x');
    expect(list).toContain('&quot;&gt;&lt;b&gt;x&lt;!--.yaml');
    const orders = await (await get(`${url}orders`)).text();
    expect(orders).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(orders).not.toContain('<script>alert');
  });

  it('with a token, asks every request for it, the live stream and the script included', async () => {
    const url = await serve(await folder(), 's3cret-token');
    for (const path of ['', 'events', 'static/app.js', 'orders']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Basic');
    }
    const basic = `Basic ${Buffer.from('me:s3cret-token').toString('base64')}`;
    expect((await fetch(url, { headers: { authorization: basic } })).status).toBe(200);
    expect((await fetch(url, { headers: { authorization: 'Bearer s3cret-token' } })).status).toBe(200);
    expect((await fetch(url, { headers: { authorization: 'Bearer s3cret-token-' } })).status).toBe(401);
  });

  it('without a configured token, asks for one generated per start: the printed link brings it and sets a cookie', async () => {
    const root = await folder();
    await writeFile(join(root, 'done/one.yaml.result.json'), REPORT('PRIVATE-1'));
    const url = await serve(root);
    const first = running as Dashboard;
    // Another local user who finds the port gets nothing without the token.
    for (const path of ['', 'events', 'orders', 'file?id=done%2Fone.yaml&kind=json']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(401);
      expect(await res.text()).not.toContain('PRIVATE-1');
    }
    expect(tokenOf(first)).toMatch(/^[\w-]{32}$/);
    const opened = await fetch(first.openUrl);
    expect(opened.status).toBe(200);
    const cookie = opened.headers.get('set-cookie') ?? '';
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const crumb = cookie.split(';')[0] ?? '';
    expect((await fetch(`${url}orders`, { headers: { cookie: crumb } })).status).toBe(200);
    expect((await fetch(`${url}orders`, { headers: { cookie: `${crumb}x` } })).status).toBe(401);
    // A new start, a new token: the old link opens nothing.
    await first.close();
    const second = await startDashboard({ root, layout: LAYOUT, port: 0, host: '127.0.0.1' });
    running = second;
    expect(tokenOf(second)).not.toBe(tokenOf(first));
    expect((await fetch(`${second.url}?token=${tokenOf(first)}`)).status).toBe(401);
  });

  it("refuses what another site's page makes the browser ask, even with the token's cookie", async () => {
    const url = await serve(await folder());
    for (const headers of [
      { 'sec-fetch-site': 'cross-site' } as Record<string, string>,
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://attacker.example' },
    ]) {
      const res = await get(`${url}input?id=drop%2Fx.yaml`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
    }
    expect((await get(url, { headers: { 'sec-fetch-site': 'same-origin' } })).status).toBe(200);
    expect((await get(url, { headers: { 'sec-fetch-site': 'none' } })).status).toBe(200);
    expect((await get(url, { headers: { origin: url.replace(/\/$/, '') } })).status).toBe(200);
  });

  it("a dropper's report of 800,000 empty problems makes a page of bounded size, ten at once", async () => {
    const root = await folder();
    // The input is kept in the drop folder (as one still being written would be), its report planted beside it.
    await writeFile(join(root, 'x.yaml'), Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n'));
    const errors = Array.from({ length: 40 }, () => ({}));
    const items = Array.from({ length: 20_000 }, () => ({ errors }));
    // The whole file's few problems point at a line: each is shown with it.
    const located = Array.from({ length: 100 }, () => ({ source: { line: 7 } }));
    const planted = JSON.stringify({ jobs: [{ status: 'failed', items }], errors: located });
    expect(planted.length).toBeLessThan(SCAN_LIMITS.reportBytes);
    await writeFile(join(root, 'x.yaml.result.json'), planted);
    const url = await serve(root);
    const pages = await Promise.all(
      Array.from({ length: 10 }, () => get(`${url}input?id=drop%2Fx.yaml`).then((r) => r.text())),
    );
    for (const page of pages) {
      // Each shown problem carries its source line; the page holds at most the page's cap of them.
      expect(page.split('<li class="error"').length - 1).toBe(VIEW_LIMITS.pageProblems);
      expect(page.length).toBeLessThan(2 * 1024 * 1024);
      expect(page).toMatch(/\d+ more errors and warnings are not shown/);
    }
  }, 60_000);

  it('live-update streams: a few per client address, each ended after its lifetime', async () => {
    running = await startDashboard({
      root: await folder(),
      layout: LAYOUT,
      port: 0,
      host: '127.0.0.1',
      limits: { maxStreams: 4, maxStreamsPerClient: 2, streamLifetimeMs: 500 },
    });
    const { port } = new URL(running.url);
    /** Opens /events from `from`; resolves with the status, and `ended` once the server ends the stream. */
    const open = (from: string) =>
      new Promise<{ status: number; ended: Promise<void> }>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/events', localAddress: from, headers: bearer() }, (res) => {
          const ended = new Promise<void>((done) => res.on('end', done).on('close', done));
          res.resume();
          resolve({ status: res.statusCode ?? 0, ended });
        })
          .on('error', reject)
          .end();
      });
    const held = [await open('127.0.0.1'), await open('127.0.0.1')];
    expect(held.map((h) => h.status)).toEqual([200, 200]);
    // A third from the same address is refused; another address still gets one.
    expect((await open('127.0.0.1')).status).toBe(503);
    expect((await open('127.0.0.2')).status).toBe(200);
    // Every stream ends by itself, which frees the client's places.
    await Promise.all(held.map((h) => h.ended));
    expect((await open('127.0.0.1')).status).toBe(200);
  }, 20_000);

  it('the inputs page shows its cap of rows and says how many more there are', async () => {
    const root = await folder();
    await Promise.all(
      Array.from({ length: MAX_INPUT_ROWS + 7 }, (_, i) => writeFile(join(root, `in-${i}.yaml`), 'version: 1\n')),
    );
    const page = await (await get(await serve(root))).text();
    expect(page.split('<tr data-id=').length - 1).toBe(MAX_INPUT_ROWS);
    expect(page).toContain('7 more, older inputs are not shown');
  });

  it("a carrier's link is followed without its query string or fragment, as it is shown", async () => {
    const root = await folder();
    const tracked = JSON.parse(REPORT('T-1')) as { jobs: Record<string, unknown>[] };
    (tracked.jobs[0] as Record<string, unknown>).tracking = {
      status: 'Despatched',
      tracking: [{ trackingNumber: null, trackingLink: 'https://carrier.example/t/1Z99?sig=SIGNATURE-1#frag' }],
    };
    await writeFile(join(root, 'done/t.yaml.result.json'), JSON.stringify(tracked));
    const orders = await (await get(`${await serve(root)}orders`)).text();
    expect(orders).toContain('href="https://carrier.example/t/1Z99"');
    expect(orders).not.toContain('SIGNATURE-1');
  });

  it('lists the inputs in held/ as held, with how much waits and why, and counts them', async () => {
    const root = await folder();
    await mkdir(join(root, 'held'));
    const held = (orderNumber: string, estimate: number) => ({
      orderNumber,
      status: 'awaiting-approval',
      estimatedCost: estimate,
      currency: 'USD',
      errors: [
        {
          code: 'approval.job-cost',
          message: `awaiting approval: estimate ${estimate} USD is over maxJobCost 500.00 USD (htorder approve)`,
        },
      ],
    });
    for (const [name, jobs] of [
      ['shop-a.csv', [held('A-1', 6000), held('A-2', 4000)]],
      ['shop-b.csv', [held('B-1', 1550)]],
    ] as const) {
      await writeFile(join(root, 'held', name), 'x');
      await writeFile(join(root, 'held', `${name}.result.json`), JSON.stringify({ command: 'watch', jobs }));
    }
    const page = await (await get(await serve(root))).text();
    expect(page).toContain('>held 2</a>');
    expect(page).toContain('>waiting 0</a>');
    expect(page).toMatch(/2 inputs<\/a> wait for approval: 3 jobs, 11,550\.00 USD/);
    expect(page).toContain(
      '2 jobs wait for approval, 10,000.00 USD: A-1: estimate 6000 USD is over maxJobCost 500.00 USD; A-2:',
    );
    expect(page.match(/data-status="held"/g)).toHaveLength(2);
    const one = await (await get(`${running?.url}input?id=held%2Fshop-a.csv`)).text();
    expect(one).toContain('2 jobs wait for approval, estimated 10,000.00 USD: nothing of them is sent until');
  });

  it('tells a request without the token where its owner finds the link, and closes its connection', async () => {
    const root = await folder();
    running = await startDashboard({ root, layout: LAYOUT, port: 0, host: '127.0.0.1' });
    let res = await fetch(running.url);
    expect(res.status).toBe(401);
    expect(res.headers.get('connection')).toBe('close');
    expect(await res.text()).toContain('Open the link htorder ui printed when it started (its first line).');
    await running.close();

    running = await startDashboard({
      root,
      layout: LAYOUT,
      port: 0,
      host: '127.0.0.1',
      linkFile: (port) => `/state/ui/${port}.url`,
    });
    const { port } = new URL(running.url);
    const text = await (await fetch(running.url)).text();
    expect(text).toContain('Open the link htorder watch --ui printed when it started');
    expect(text).toContain(`/state/ui/${port}.url, readable by the watcher's user only (cat /state/ui/${port}.url)`);
    expect(text).not.toContain(tokenOf(running));
    await running.close();

    // A token of one's own (the kind another machine reaches through a proxy): no file is named.
    running = await startDashboard({
      root,
      layout: LAYOUT,
      port: 0,
      host: '127.0.0.1',
      token: 'mine-1234',
      linkFile: () => '/state/x.url',
    });
    res = await fetch(running.url);
    const own = await res.text();
    expect(own).toContain('uiToken (HTORDER_UI_TOKEN');
    expect(own).not.toContain('/state/');
  });
});
