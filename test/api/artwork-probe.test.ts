import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedAddress } from '../../src/api/artwork-addresses.js';
import { artworkAgent, probeArtwork } from '../../src/api/artwork-probe.js';
import { startArtworkServer } from '../support/artwork-server.js';

let art: Awaited<ReturnType<typeof startArtworkServer>>;
beforeAll(async () => {
  art = await startArtworkServer();
});
afterAll(() => art.close());

const loopback = { allowLoopback: true };
const probe = (path: string, opts: Parameters<typeof probeArtwork>[2] = loopback) =>
  probeArtwork(`${art.url}${path}`, artworkAgent(opts), opts);

describe('probeArtwork', () => {
  it('takes an image, and a ranged GET of an untyped file whose first bytes are an image', async () => {
    expect(await probe('/good.png?sig=1')).toEqual({
      ok: true,
      contentType: 'image/png',
      finalUrl: `${art.url}/good.png`,
    });
    expect(await probe('/untyped')).toMatchObject({ ok: true });
    const untyped = art.requests().filter((r) => r.url === '/untyped');
    expect(untyped.map((r) => r.method)).toEqual(['HEAD', 'GET']);
  });

  it('refuses a 404, an HTML page and a redirect chain too long, naming the link without its query', async () => {
    expect(await probe('/missing.png?X-Amz-Signature=SECRET')).toEqual({
      ok: false,
      code: 'artwork.unreachable',
      message: `answers 404 (${art.url}/missing.png)`,
    });
    expect(await probe('/page.html')).toMatchObject({ ok: false, code: 'artwork.not-an-image' });
    expect(await probe('/hop/3')).toMatchObject({ ok: true });
    expect(await probe('/hop/4')).toMatchObject({ ok: false, code: 'artwork.redirect' });
  });

  it('refuses loopback unless allowed, checked on the address the connection uses', async () => {
    const literal = await probe('/good.png', {});
    expect(literal).toMatchObject({ ok: false, code: 'artwork.private-address' });
    // A name, not an address: refused by the lookup of the connection itself, before a byte is sent.
    const before = art.requests().length;
    const named = await probeArtwork(`${art.url.replace('127.0.0.1', 'localhost')}/good.png`, artworkAgent({}), {});
    expect(named).toMatchObject({ ok: false, code: 'artwork.private-address' });
    expect(named.ok ? '' : named.message).toContain('localhost: resolves to');
    expect(art.requests().length).toBe(before);
  });

  it('knows the addresses the printer cannot reach', () => {
    for (const ip of [
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '0.0.0.0',
    ])
      expect([ip, refusedAddress(ip, {})]).toEqual([ip, true]);
    for (const ip of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '172.32.0.1'])
      expect([ip, refusedAddress(ip, {})]).toEqual([ip, false]);
    expect(refusedAddress('127.0.0.1', { allowLoopback: true })).toBe(false);
    expect(refusedAddress('10.0.0.1', { allowLoopback: true })).toBe(true);
    expect(refusedAddress('10.0.0.1', { allowPrivate: true })).toBe(false);
  });
});
