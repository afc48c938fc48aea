import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from '../../src/ui/dashboard.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * Another local user, without the token, opens connections to the dashboard's port and says
 * nothing, opening a new one as soon as one is closed: the owner's page loads must all get in.
 * The holder is a second process, as the other user would be.
 */

let running: Dashboard | undefined;
let holder: ChildProcess | undefined;
afterEach(async () => {
  holder?.kill('SIGKILL');
  holder = undefined;
  await running?.close();
  running = undefined;
});

/**
 * A child process that keeps `n` silent connections to 127.0.0.1:port open, opening another
 * whenever one closes. Resolves once the first `n` are connected; `opened()` asks how many
 * connections it has opened in all.
 */
async function holdIdle(port: number, n: number): Promise<{ opened: () => Promise<number> }> {
  const script = `
    const net = require('node:net');
    let opened = 0, first = 0;
    const open = () => {
      const s = net.connect(${port}, '127.0.0.1');
      s.on('connect', () => { opened++; if (++first === ${n}) process.stdout.write('held\\n'); });
      s.on('error', () => {});
      s.on('close', () => setImmediate(open));
    };
    for (let i = 0; i < ${n}; i++) open();
    process.stdin.on('data', () => process.stdout.write(opened + '\\n'));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  holder = child;
  await new Promise<void>((resolve) => {
    const onData = (d: Buffer) => {
      if (!d.toString().includes('held')) return;
      child.stdout?.off('data', onData);
      resolve();
    };
    child.stdout?.on('data', onData);
  });
  return {
    opened: () =>
      new Promise<number>((resolve) => {
        child.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
        child.stdin?.write('?\n');
      }),
  };
}

/** One page load as a browser's first: a new connection, the token in the request. */
function load(url: string, token: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, headers: { authorization: `Bearer ${token}` }, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', (err) => resolve(err.message));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the dashboard under idle connections of a client without the token', () => {
  it("serves every one of the owner's page loads while another process holds 200 idle connections", async () => {
    const root = await tempDirPerTest('htorder-ui-fair-');
    await mkdir(join(root, 'done'));
    await writeFile(join(root, 'a.yaml'), 'version: 1\n');
    running = await startDashboard({
      root,
      layout: { processing: 'processing', done: 'done', failed: 'failed' },
      port: 0,
      host: '127.0.0.1',
    });
    const token = new URL(running.openUrl).searchParams.get('token') ?? '';
    const held = await holdIdle(Number(new URL(running.url).port), 200);
    const answers: (number | string)[] = [];
    for (let i = 0; i < 20; i++) {
      answers.push(await load(running.url, token));
      // Spread over the untrusted connections' lifetime: some loads land while they are renewed.
      await sleep(150);
    }
    expect(answers).toEqual(Array(20).fill(200));
    // The holder was not idle all along: its connections were closed and opened again meanwhile.
    expect(await held.opened()).toBeGreaterThan(200);
  }, 30_000);
});
