import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artworkChecks } from '../../src/api/artwork-checks.js';
import { artworkAgent, probeArtwork } from '../../src/api/artwork-probe.js';
import { PNG } from '../support/artwork-server.js';
import { startLoopback } from '../support/loopback-server.js';

/**
 * Slow artwork hosts on loopback: a body sent one byte at a time never trips an idle timeout,
 * so a probe must end at its own deadline across every request and redirect; an input's links
 * stop at its budget; and one input's slow links never hold every slot, so another input's
 * link is asked at once.
 */

let server: Awaited<ReturnType<typeof startLoopback>>;
const timers = new Set<NodeJS.Timeout>();

/** An image whose body comes one byte every `ms` (HEAD refused, so the probe GETs it). */
function drip(method: string, res: ServerResponse, ms: number): void {
  if (method === 'HEAD') {
    res.writeHead(405);
    res.end();
    return;
  }
  res.writeHead(206, { 'content-type': 'application/octet-stream' });
  let at = 0;
  const timer = setInterval(() => {
    res.write(Buffer.from([PNG[at % PNG.length] ?? 0]));
    at++;
  }, ms);
  timers.add(timer);
  res.on('close', () => {
    clearInterval(timer);
    timers.delete(timer);
  });
}

beforeAll(async () => {
  server = await startLoopback((req, res) => {
    const path = req.url.split('?')[0] ?? '';
    if (path.startsWith('/drip/')) drip(req.method, res, 100);
    else if (path.startsWith('/slowhop/')) {
      const n = Number(path.slice('/slowhop/'.length));
      setTimeout(() => {
        res.writeHead(302, { location: n > 1 ? `/slowhop/${n - 1}` : '/good.png' });
        res.end();
      }, 600);
    } else if (path === '/good.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(req.method === 'HEAD' ? undefined : PNG);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
});
afterAll(async () => {
  for (const t of timers) clearInterval(t);
  await server.close();
});

const opts = { allowLoopback: true };
const timed = async <T>(p: Promise<T>): Promise<{ value: T; ms: number }> => {
  const start = Date.now();
  const value = await p;
  return { value, ms: Date.now() - start };
};

describe('artwork checks are bounded in time', () => {
  it('a body dripped a byte at a time ends at the probe deadline, not after every byte', async () => {
    // 512 bytes a tenth of a second apart would take 51 s; each byte resets an idle timeout.
    const { value, ms } = await timed(
      probeArtwork(`${server.url}/drip/a.png?sig=SECRET`, artworkAgent(opts), { ...opts, deadlineMs: 1000 }),
    );
    expect(value).toMatchObject({ ok: false, code: 'artwork.unreachable' });
    expect(value.ok ? '' : value.message).toContain('did not answer in full within 1 s');
    expect(value.ok ? '' : value.message).not.toContain('SECRET');
    expect(ms).toBeLessThan(5000);
  });

  it('one deadline covers every redirect: three slow hops do not each get their own', async () => {
    const agent = artworkAgent(opts);
    // Each hop answers after 0.6 s: 1.8 s in all, past a deadline of 1 s.
    const { value, ms } = await timed(probeArtwork(`${server.url}/slowhop/3`, agent, { ...opts, deadlineMs: 1000 }));
    expect(value).toMatchObject({ ok: false, code: 'artwork.unreachable' });
    expect(ms).toBeLessThan(1500);
    // Given the time, the same chain is fine.
    expect(await probeArtwork(`${server.url}/slowhop/3`, agent, { ...opts, deadlineMs: 5000 })).toMatchObject({
      ok: true,
    });
  });

  it("one input's slow links never take every slot: another input's link is asked at once", async () => {
    const checks = artworkChecks('on', { ...opts, concurrency: 4, deadlineMs: 3000 });
    try {
      const dropper = checks.forInput();
      const slow = Array.from({ length: 8 }, (_, i) => dropper.check(`${server.url}/drip/fair-${i}.png`));
      // The dropper's links are asked (three at a time) and hang.
      await new Promise((r) => setTimeout(r, 300));
      const gets = () => server.seen.filter((r) => r.url.startsWith('/drip/fair-') && r.method === 'GET').length;
      expect(gets()).toBeGreaterThan(0);
      const other = checks.forInput();
      const { value, ms } = await timed(other.check(`${server.url}/good.png?other=1`));
      expect(value).toMatchObject({ ok: true });
      expect(ms).toBeLessThan(2000);
      // The dropper's never held more than its share: three GETs in flight at most.
      expect(gets()).toBeLessThanOrEqual(3);
      void Promise.allSettled(slow);
    } finally {
      await checks.close().catch(() => undefined);
    }
  });

  it("an input's links stop at its budget; another input asking the same link gets its own check", async () => {
    const checks = artworkChecks('on', { ...opts, concurrency: 4, deadlineMs: 800, budgetMs: 1000 });
    try {
      const input = checks.forInput();
      const links = Array.from({ length: 7 }, (_, i) => `${server.url}/drip/budget-${i}.png`);
      const { value, ms } = await timed(Promise.all(links.map((l) => input.check(l))));
      // Three at a time: the first three end at their deadline (0.8 s), the next three are cut
      // by the input's budget (1 s), the last never begins.
      expect(ms).toBeLessThan(2500);
      expect(value.map((r) => (r.ok ? 'ok' : r.code))).toEqual([
        ...new Array(3).fill('artwork.unreachable'),
        ...new Array(4).fill('artwork.unchecked'),
      ]);
      expect(value[6]?.ok ? '' : value[6]?.message).toContain('artworkCheckBudgetMs');
      // The budget was that input's, not the link's answer: another input asks it again.
      const again = await checks.forInput().check(links[6] ?? '');
      expect(again).toMatchObject({ ok: false, code: 'artwork.unreachable' });
    } finally {
      await checks.close().catch(() => undefined);
    }
  });
});
