import { chmodSync, chownSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openApiSession } from '../../src/app/api-session.js';
import { runCli } from '../../src/cli/program.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { sink } from '../support/sink.js';

/**
 * htorder's calendar clock in rehearsals (docs/configuration.md#rehearsals-and-tests): the
 * clockOffset setting moves it; under `--sandbox`, the sandbox's own clock moves it too, also
 * when `htorder sandbox clock` moves it from another process; saved plans are dated and aged by
 * it, and a plan dated in the future or written where others could change it is refused.
 */

const io = captureStdio();
const DAY = 86_400_000;
let dir: string;
let order: string;
const saved = { ...process.env };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'htorder-clock-'));
  order = join(dir, 'reorder.yaml');
  writeFileSync(order, readFileSync(join(ROOT, 'samples/reorder/asset-reorder.yaml')));
  for (const k of Object.keys(process.env)) if (k.startsWith('HTORDER_')) delete process.env[k];
  return () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  };
});

const planFile = (): string => join(dir, 'plan.json');
const createdAt = (): number =>
  Date.parse((JSON.parse(readFileSync(planFile(), 'utf8')) as { createdAt: string }).createdAt);

describe('clockOffset', () => {
  it('moves the date a saved plan is made at, and says so at every start', async () => {
    process.env.HTORDER_CLOCK_OFFSET = '+3d';
    expect(await runCli(['plan', '--sandbox', order, '--out', planFile()]), io.err).toBe(0);
    expect(createdAt() - Date.now()).toBeGreaterThan(3 * DAY - 60_000);
    expect(io.err).toContain('the calendar clock is moved by HTORDER_CLOCK_OFFSET');
    // The warning says the moved time itself (a Date object would be logged as {}).
    const said = /"now":"([^"]+)"/.exec(io.err)?.[1];
    expect(Date.parse(said ?? '') - Date.now()).toBeGreaterThan(3 * DAY - 60_000);
  });

  it('a plan from the future is refused; on the same clock it is applied', async () => {
    process.env.HTORDER_CLOCK_OFFSET = '+3d';
    expect(await runCli(['plan', '--sandbox', order, '--out', planFile()])).toBe(0);
    delete process.env.HTORDER_CLOCK_OFFSET;
    expect(await runCli(['apply', '--sandbox', planFile()])).toBe(1);
    expect(io.err).toMatch(/refused, nothing sent: the plan says it was made at .*, later than now/);
    process.env.HTORDER_CLOCK_OFFSET = '+3d';
    expect(await runCli(['apply', '--sandbox', planFile()]), io.err).toBe(0);
  });

  it('ages a plan: two days on, yesterday’s plan is too old', async () => {
    expect(await runCli(['plan', '--sandbox', order, '--out', planFile()])).toBe(0);
    process.env.HTORDER_CLOCK_OFFSET = '+2d';
    expect(await runCli(['apply', '--sandbox', planFile()])).toBe(1);
    expect(io.err).toContain('older than --max-age 24 h');
  });
});

describe('the sandbox clock', () => {
  it('`htorder sandbox clock +1d` moves --sandbox, and htorder’s calendar with it', async () => {
    expect(await runCli(['sandbox', 'clock', '+1d'])).toBe(0);
    expect(io.out).toMatch(/^sandbox clock: \S+Z, 1d ahead of real time \(state .*sandbox\/state\.json\)\n$/);
    expect(await runCli(['plan', '--sandbox', order, '--out', planFile()]), io.err).toBe(0);
    expect(createdAt() - Date.now()).toBeGreaterThan(DAY - 60_000);
    expect(createdAt() - Date.now()).toBeLessThan(DAY + 60_000);
  });

  it('a running --sandbox session follows a move made by another process from its next input', async () => {
    const session = await openApiSession({
      sandbox: true,
      flags: {},
      env: process.env,
      cwd: dir,
      stderr: sink().stream,
    });
    try {
      expect(Math.abs(session.clock.now() - Date.now())).toBeLessThan(1000);
      // Another process: its own sandbox on the same state file.
      expect(await runCli(['sandbox', 'clock', '+2d'])).toBe(0);
      await session.refreshClock();
      expect(session.clock.now() - Date.now()).toBeGreaterThan(2 * DAY - 1000);
    } finally {
      await session.close();
    }
  });

  it('the session clock is the real clock, plus clockOffset, plus the sandbox’s offset', async () => {
    expect(await runCli(['sandbox', 'clock', '+1d'])).toBe(0);
    const env = { ...process.env, HTORDER_CLOCK_OFFSET: '+12h' };
    const session = await openApiSession({ sandbox: true, flags: {}, env, cwd: dir, stderr: sink().stream });
    try {
      expect(session.clock.now() - Date.now()).toBeGreaterThan(DAY + DAY / 2 - 1000);
      expect(session.clock.now() - Date.now()).toBeLessThan(DAY + DAY / 2 + 1000);
    } finally {
      await session.close();
    }
  });

  it('`htorder api POST /_sandbox/clock/advance --sandbox` reaches the test controls (no longer a 404)', async () => {
    const args = [
      'api',
      'POST',
      '/_sandbox/clock/advance',
      '--data',
      JSON.stringify({ ms: 3 * 3_600_000 }),
      '--sandbox',
    ];
    expect(await runCli(args), io.err).toBe(0);
    expect(JSON.parse(io.out)).toHaveProperty('now');
    io.out = '';
    expect(await runCli(['sandbox', 'clock'])).toBe(0);
    expect(io.out).toContain(', 3h ahead of real time');
  });

  it('is refused backwards, and a duration it cannot read is a usage error', async () => {
    expect(await runCli(['sandbox', 'clock', '2x'])).toBe(2);
    expect(io.err).toContain('"2x" is not a duration');
    expect(await runCli(['sandbox', 'clock', '--', '-1d'])).toBe(2);
    expect(io.err).toContain("the sandbox's clock only moves forward");
  });

  describe('of a running htorder sandbox', () => {
    let server: Sandbox;
    beforeAll(async () => {
      server = await startSandbox({ port: 0 });
    });
    afterAll(async () => {
      await server.close();
    });

    it('moves through --url (its url or its adminUrl)', async () => {
      expect(await runCli(['sandbox', 'clock', '+2h', '--url', server.url])).toBe(0);
      expect(await runCli(['sandbox', 'clock', '30m', '--url', `${server.url}/_sandbox`])).toBe(0);
      const now = Date.parse((await server.admin.clock()).now);
      expect(now - Date.now()).toBeGreaterThan(2.5 * 3_600_000 - 5000);
      expect(io.out).toContain(`(server ${server.url})`);
    });
  });
});

describe('a saved plan file', () => {
  beforeEach(async () => {
    expect(await runCli(['plan', '--sandbox', order, '--out', planFile()])).toBe(0);
  });

  it('is written private to its user', () => {
    expect(statSync(planFile()).mode & 0o777).toBe(0o600);
  });

  it('that group or others may write is refused', async () => {
    chmodSync(planFile(), 0o620);
    expect(await runCli(['apply', '--sandbox', planFile()])).toBe(2);
    expect(io.err).toContain('refusing the plan: group or others may write it');
  });

  it('is never written over an input or a report: the command stops before anything is sent', async () => {
    const manifest = readFileSync(order, 'utf8');
    for (const out of [order, join(dir, '..', basename(dir), 'reorder.yaml'), `${order}.result.json`]) {
      expect(await runCli(['plan', '--sandbox', order, '--out', out])).toBe(2);
      expect(io.err).toMatch(/--out \S+ (is the input|is named as one of htorder's reports).*; nothing was sent/);
    }
    expect(readFileSync(order, 'utf8')).toBe(manifest);
    expect(readFileSync(`${order}.result.json`, 'utf8')).toContain('"status"');
    // Nor is a folder that is not there, or a file on the way: said before anything is sent, never a crash.
    for (const out of [join(dir, 'nowhere', 'plan.json'), join(order, 'plan.json')]) {
      io.err = '';
      expect(await runCli(['plan', '--sandbox', order, '--out', out])).toBe(2);
      expect(io.err).toContain('is in a folder that does not exist');
      expect(io.err).not.toContain('internal error');
    }
    // A folder at the name: said before anything is planned, not once every input was.
    for (const out of [dir, '.']) {
      io.err = '';
      expect(await runCli(['plan', '--sandbox', order, '--out', out])).toBe(2);
      expect(io.err).toContain(
        `htorder plan: --out ${out} is a folder, which the plan cannot replace; name a file in it (plan.json); nothing was sent\n`,
      );
      expect(io.err).not.toContain(`${order}:`);
    }
  });

  it.runIf(process.getuid?.() === 0)('that another user owns is refused', async () => {
    chownSync(planFile(), 12345, 12345);
    expect(await runCli(['apply', '--sandbox', planFile()])).toBe(2);
    expect(io.err).toContain('refusing the plan: it belongs to uid 12345, not to you (uid 0)');
  });
});
