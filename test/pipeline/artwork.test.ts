import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startArtworkServer } from '../support/artwork-server.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
let art: Awaited<ReturnType<typeof startArtworkServer>>;
beforeAll(async () => {
  h = await PipelineHarness.start();
  art = await startArtworkServer();
});
afterAll(async () => {
  await art.close();
  await h.close();
});
beforeEach(async () => h.reset());

const ON = { env: { HTORDER_ARTWORK_CHECK: 'on' } };

/** A day `days` from now, YYYY-MM-DD. */
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/** `X-Amz-Date` of now: a SigV4 link signed a moment ago for `seconds`. */
const amzNow = () =>
  new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

const print = (link: string) => `      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: art
        externalArtworkUrl: "${link}"
        attributes: { Colors: 4 }
`;

describe('artwork links in plan and run', () => {
  it('plan refuses a 404, an HTML page, a private address and a link expiring before the due date, each located; the good line is valid', async () => {
    const due = inDays(20);
    const signed = `${art.url}/signed.png?X-Amz-Date=${amzNow()}&X-Amz-Expires=3600&X-Amz-Signature=SECRETSIG`;
    const links = [
      `${art.url}/good.png`,
      `${art.url}/missing.png`,
      `${art.url}/page.html`,
      'https://10.255.0.1/a.png',
      signed,
    ];
    const file = await h.write(
      'art.yaml',
      manifest(links.map((link, i) => ({ orderNumber: `ART-${i + 1}`, dateDue: due, items: print(link) }))),
    );
    const { code, stderr } = await h.cli('plan', [file], ON);
    expect(code).toBe(1);
    const report = await h.report(file);
    const problems = report.jobs.map((j) =>
      [...j.errors, ...j.items.flatMap((i) => i.errors)].map(
        (p) => `${p.code} ${p.field} line ${p.source && 'line' in p.source ? p.source.line : '?'}`,
      ),
    );
    expect(problems).toEqual([
      [],
      ['artwork.unreachable jobs[1].items[0].externalArtworkUrl line 35'],
      ['artwork.not-an-image jobs[2].items[0].externalArtworkUrl line 52'],
      ['artwork.private-address jobs[3].items[0].externalArtworkUrl line 69'],
      ['artwork.expires-early jobs[4].items[0].externalArtworkUrl line 86'],
    ]);
    expect(stderr).not.toContain('SECRETSIG');
    expect(JSON.stringify(report)).not.toContain('SECRETSIG');
    // Each distinct link once; the expiring one is refused before it is fetched.
    const gets = art.requests().map((r) => r.url.split('?')[0]);
    expect(gets.sort()).toEqual(['/good.png', '/missing.png', '/page.html']);
  });

  it('run fetches each distinct link once for all its jobs, and submits', async () => {
    const link = `${art.url}/good.png`;
    const before = art.requests().length;
    const file = await h.write(
      'same.yaml',
      manifest([1, 2, 3].map((n) => ({ orderNumber: `SAME-${n}`, items: print(link) }))),
    );
    expect((await h.cli('run', [file], ON)).code).toBe(0);
    expect(art.requests().length - before).toBe(1);
    expect(await h.sandbox.admin.jobs()).toHaveLength(3);
  });

  it('warn reports a failing link and still orders; off fetches nothing', async () => {
    const file = await h.write('warn.yaml', manifest([{ orderNumber: 'W-1', items: print(`${art.url}/missing.png`) }]));
    const warned = await h.cli('run', [file], { env: { HTORDER_ARTWORK_CHECK: 'warn' } });
    expect(warned.code).toBe(0);
    const job = (await h.report(file)).jobs[0];
    expect(job?.warnings.map((p) => p.code)).toEqual(['artwork.unreachable']);
    expect(job?.status).toBe('submitted');
    const before = art.requests().length;
    const off = await h.write('off.yaml', manifest([{ orderNumber: 'O-1', items: print(`${art.url}/missing.png`) }]));
    expect((await h.cli('run', [off], { env: { HTORDER_ARTWORK_CHECK: 'off' } })).code).toBe(0);
    expect(art.requests().length).toBe(before);
  });

  it('a new print sent with no artwork is counted in the summary and the terminal as waiting for artwork', async () => {
    const noArt = `      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: later
        attributes: { Colors: 4 }
`;
    const file = await h.write('owed.yaml', manifest([{ orderNumber: 'OWED-1', items: noArt }]));
    const { code, stderr } = await h.cli('run', [file], ON);
    expect(code).toBe(0);
    const report = await h.report(file);
    expect(report.summary.artworkNeeded).toBe(1);
    expect(report.jobs[0]?.items[0]?.needsArtworkToBeUploaded).toBe(true);
    expect(stderr).toContain('1 new-print line waits for artwork');
  });
});
