import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const REPORT_PEAK = fileURLToPath(new URL('../../bench/lib/report-peak.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string | undefined;

afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The peak RSS report-peak.mjs writes for a child that does almost nothing. */
async function idleChildPeak(): Promise<number> {
  dir = await mkdtemp(join(tmpdir(), 'htorder-peak-'));
  const stats = join(dir, 'stats.json');
  const child = spawn(process.execPath, ['--import', REPORT_PEAK, '-e', ''], {
    env: { ...process.env, HTORDER_BENCH_STATS: stats },
    stdio: 'ignore',
  });
  await new Promise((resolve) => child.on('close', resolve));
  return (JSON.parse(await readFile(stats, 'utf8')) as { maxRssBytes: number }).maxRssBytes;
}

describe.runIf(process.platform === 'linux')("a benchmarked child's peak RSS", () => {
  it('is its own, not the memory of the process that spawned it', async () => {
    // Filled, so resident: what a benchmark holds when it starts a run (the simulator, request bodies).
    const held = Array.from({ length: 300 }, () => Buffer.alloc(1 << 20, 7));
    const peak = await idleChildPeak();
    expect(held.length).toBe(300);
    // A bare node process peaks near 50 MB; the spawner's 300 MB counted in would show here.
    expect(peak).toBeGreaterThan(10 << 20);
    expect(peak).toBeLessThan(150 << 20);
  });
});

/** What report-peak.mjs writes with HTORDER_BENCH_TRACE=1 for a child that sends `script`'s POSTs. */
async function tracedChild(script: string, env: Record<string, string>): Promise<Record<string, number>> {
  dir = await mkdtemp(join(tmpdir(), 'htorder-trace-'));
  const stats = join(dir, 'stats.json');
  const child = spawn(process.execPath, ['--import', REPORT_PEAK, '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, ...env, HTORDER_BENCH_STATS: stats, HTORDER_BENCH_TRACE: '1' },
    stdio: 'ignore',
  });
  const [code] = await once(child, 'close');
  expect(code).toBe(0);
  return JSON.parse(await readFile(stats, 'utf8')) as Record<string, number>;
}

describe("a traced child's POSTs", () => {
  it('are timed from request to answer, with how many were in flight', async () => {
    const server = createServer((req, res) => {
      req.resume();
      setTimeout(() => res.end('{}'), 40);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      // Two at a time, twice: about 40 ms each, two in flight throughout.
      const script = `import { request } from 'undici';
        const post = async () => (await request(process.env.URL, { method: 'POST', body: '{"validateOnly":true}' })).body.text();
        for (let i = 0; i < 2; i++) await Promise.all([post(), post()]);`;
      const trace = await tracedChild(script, { URL: `http://127.0.0.1:${port}/Jobs` });
      expect(trace.posts).toBe(4);
      expect(trace.postMs / trace.posts).toBeGreaterThanOrEqual(39);
      const inFlight = trace.inFlightMs / (trace.lastPostMs - trace.firstPostMs);
      expect(inFlight).toBeGreaterThan(1.6);
      expect(inFlight).toBeLessThanOrEqual(2);
      expect(trace.postMedianMs).toBeGreaterThanOrEqual(39);
    } finally {
      server.close();
    }
  });

  it("tell most POSTs' time from the few slow ones': the median and the 99th percentile", async () => {
    let n = 0;
    // Every fifth answer is held 300 ms, the others 20 ms.
    const server = createServer((req, res) => {
      req.resume();
      setTimeout(() => res.end('{}'), ++n % 5 === 0 ? 300 : 20);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const script = `import { request } from 'undici';
        for (let i = 0; i < 10; i++) await (await request(process.env.URL, { method: 'POST', body: '{"validateOnly":true}' })).body.text();`;
      const trace = await tracedChild(script, { URL: `http://127.0.0.1:${port}/Jobs` });
      expect(trace.posts).toBe(10);
      expect(trace.postMedianMs).toBeGreaterThanOrEqual(19);
      expect(trace.postMedianMs).toBeLessThan(150);
      expect(trace.postP99Ms).toBeGreaterThanOrEqual(299);
      expect(trace.postMs / trace.posts).toBeGreaterThan(trace.postMedianMs + 40);
    } finally {
      server.close();
    }
  });
});
