import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HEALTH_LIMITS, startHealthServer, type HealthServer } from '../../src/watch/health-server.js';
import { WatchMetrics } from '../../src/watch/metrics.js';

/**
 * An exposed health port must not let idle clients take the watcher's file descriptors (20,000
 * idle connections gave EMFILE on every scan). Another process opens hundreds of sockets and
 * says nothing; this process (the watcher) must hold at most the cap, drop the idle ones, and
 * still answer a new probe.
 */

let health: HealthServer | undefined;
let holder: ChildProcess | undefined;
afterEach(async () => {
  holder?.kill('SIGKILL');
  holder = undefined;
  await health?.close();
  health = undefined;
});

const openFds = (): number => readdirSync('/proc/self/fd').length;

/**
 * A child process that opens `n` sockets to host:port and sends nothing; `settled` resolves
 * once every socket has connected or been closed, `open()` asks how many are still open.
 */
function holdSockets(
  port: number,
  n: number,
): { child: ChildProcess; settled: Promise<void>; open: () => Promise<number> } {
  const script = `
    const net = require('node:net');
    let open = 0, settled = 0;
    const settle = () => { if (++settled === ${n}) process.stdout.write('settled\\n'); };
    for (let i = 0; i < ${n}; i++) {
      const s = net.connect(${port}, '127.0.0.1');
      let connected = false, done = false;
      const once = () => { if (!done) { done = true; settle(); } };
      s.on('connect', () => { connected = true; open++; once(); });
      s.on('error', () => {});
      s.on('close', () => { if (connected) open--; once(); });
    }
    process.stdin.on('data', () => process.stdout.write(open + '\\n'));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const settled = new Promise<void>((resolve) => {
    const onData = (d: Buffer) => {
      if (d.toString().includes('settled')) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
  });
  const open = () =>
    new Promise<number>((resolve) => {
      child.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      child.stdin?.write('?\n');
    });
  return { child, settled, open };
}

async function healthz(url: string): Promise<number> {
  const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
  await res.text();
  return res.status;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('health port limits', () => {
  it('has a small connection cap and short timeouts by default', () => {
    expect(HEALTH_LIMITS.maxConnections).toBeLessThanOrEqual(64);
    expect(HEALTH_LIMITS.idleTimeoutMs).toBeLessThanOrEqual(10_000);
    expect(HEALTH_LIMITS.headersTimeoutMs).toBeLessThanOrEqual(10_000);
  });

  it('400 idle sockets from another process: this one holds at most the cap, drops them, and still answers', async () => {
    const metrics = new WatchMetrics({ processMetrics: false });
    const cap = 20;
    health = await startHealthServer({
      port: 0,
      registry: metrics.registry,
      health: () => ({ status: 'ok' }),
      limits: { maxConnections: cap, idleTimeoutMs: 1500, headersTimeoutMs: 1500, requestTimeoutMs: 3000 },
    });
    const port = Number(new URL(health.url).port);
    expect(await healthz(health.url)).toBe(200);
    await sleep(100);
    const before = openFds();

    const held = holdSockets(port, 400);
    holder = held.child;
    await held.settled;
    await sleep(50);
    // The watcher's side: never more than the cap (plus a little slack for the runtime).
    const during = openFds() - before;
    expect(during).toBeLessThanOrEqual(cap + 5);

    // The idle ones are dropped after the idle timeout: the holder sees its sockets closed.
    const deadline = Date.now() + 8000;
    let stillOpen = await held.open();
    while (stillOpen > 0 && Date.now() < deadline) {
      await sleep(100);
      stillOpen = await held.open();
    }
    expect(stillOpen).toBe(0);
    // A new probe is answered, and the watcher holds no leftover descriptors.
    expect(await healthz(health.url)).toBe(200);
    expect(openFds() - before).toBeLessThanOrEqual(5);
  });

  it('a request trickling its headers is cut at the headers timeout; a POST is refused', async () => {
    const metrics = new WatchMetrics({ processMetrics: false });
    health = await startHealthServer({
      port: 0,
      registry: metrics.registry,
      health: () => ({ status: 'ok' }),
      limits: { headersTimeoutMs: 300, requestTimeoutMs: 600, idleTimeoutMs: 5000 },
    });
    const port = Number(new URL(health.url).port);
    const closed = await new Promise<number>((resolve) => {
      const started = Date.now();
      const s = connect(port, '127.0.0.1', () => {
        s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        const t = setInterval(() => s.write('X-Slow: 1\r\n'), 100);
        s.on('close', () => {
          clearInterval(t);
          resolve(Date.now() - started);
        });
      });
      s.on('error', () => {});
      s.resume();
    });
    expect(closed).toBeLessThan(3000);
    const post = await fetch(`${health.url}/healthz`, { method: 'POST', body: 'x'.repeat(10) });
    expect(post.status).toBe(405);
  });
});
