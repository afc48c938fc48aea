import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxStateFile } from '../../src/app/sandbox-state.js';
import { MAX_CLOCK_OFFSET_MS } from '../../src/sandbox/clock.js';
import type { Sandbox, SandboxSnapshot, SandboxStateStore } from '../../src/sandbox/index.js';
import { Caller, raw, start, usJob } from '../support/sandbox-http.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * The sandbox clock stays in a range every date it writes can show: an advance past a century
 * in all is a 400, and a saved state whose clock offset or start lies beyond it is refused when
 * the sandbox starts, naming the field (`clockOffsetMs: 1e15` once answered every request 500).
 */

const open: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function advance(sb: Sandbox, ms: number) {
  return raw(`${sb.url}/_sandbox/clock/advance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ms }),
  });
}

describe('the sandbox clock range', () => {
  it('answers 400 to an advance past the range, in one step or in many, and keeps serving', async () => {
    const sb = await start();
    open.push(sb);
    const far = await advance(sb, 1e15);
    expect(far.status, far.text).toBe(400);
    expect(far.body.detail).toMatch(/at most \d+ ms forward in all/);
    expect((await advance(sb, MAX_CLOCK_OFFSET_MS - 1000)).status).toBe(200);
    expect((await advance(sb, 2000)).status).toBe(400);
    const created = await new Caller(sb, 'us-demo').post('/Jobs', usJob());
    expect(created.status, created.text).toBe(201);
  });

  it('refuses a saved state with a clock offset or a start beyond the range, naming the field', async () => {
    let saved: SandboxSnapshot | undefined;
    const store = (state: unknown): SandboxStateStore => ({
      readIfChanged: async () => (state === undefined ? { kind: 'none' } : { kind: 'saved', state }),
      withLock: (fn) => fn(),
      write: async (s) => {
        saved = s;
      },
    });
    const first = await start({ state: store(undefined) });
    open.push(first);
    expect((await new Caller(first, 'us-demo').post('/Jobs', usJob())).status).toBe(201);
    await first.close();
    open.splice(0);
    const good = structuredClone(saved) as SandboxSnapshot;
    await expect(start({ state: store({ ...good, clockOffsetMs: 1e15 }) })).rejects.toThrow(
      `$.clockOffsetMs: must be <= ${MAX_CLOCK_OFFSET_MS}`,
    );
    await expect(start({ state: store({ ...good, startMs: 1e20 }) })).rejects.toThrow('$.startMs: must be <=');
    const ok = await start({ state: store({ ...good, clockOffsetMs: MAX_CLOCK_OFFSET_MS }) });
    open.push(ok);
    expect((await new Caller(ok, 'us-demo').get('/Jobs/active')).status).toBe(200);
  });

  it('refuses a FIFO at the state file at once instead of waiting on it', async () => {
    const dir = join(await tempDirPerTest(), 'sandbox');
    mkdirSync(dir);
    const file = join(dir, 'state.json');
    execFileSync('mkfifo', [file]);
    await expect(start({ state: new SandboxStateFile(file, { staleMs: 10_000 }) })).rejects.toThrow(
      /state\.json is not a regular file; run again with --sandbox-reset/,
    );
  });
});
