import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openApiSession } from '../../src/app/api-session.js';
import { wantsColor } from '../../src/core/log/logger.js';

const ESC = '\u001b[';

/** A stderr stand-in that may claim to be a terminal, and keeps what is written. */
function fakeStderr(isTTY: boolean): Writable & { isTTY: boolean; text: () => string } {
  let text = '';
  const w = new Writable({
    write: (c, _e, cb) => {
      text += String(c);
      cb();
    },
  });
  return Object.assign(w, { isTTY, text: () => text });
}

/** What one warning logged through a real CLI session looks like on that stderr. */
async function logLine(isTTY: boolean, env: Record<string, string | undefined>): Promise<string> {
  const stderr = fakeStderr(isTTY);
  const session = await openApiSession({ sandbox: true, flags: {}, env, cwd: process.cwd(), stderr });
  try {
    session.logger.warn({ orderNumber: 'PO-1' }, 'something to see');
  } finally {
    await session.close();
  }
  return stderr.text();
}

describe('colour only on a terminal, never with NO_COLOR', () => {
  it('wantsColor: TTY and no NO_COLOR (an empty NO_COLOR does not count, per no-color.org)', () => {
    expect(wantsColor({ isTTY: true }, {})).toBe(true);
    expect(wantsColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(wantsColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(wantsColor({ isTTY: false }, {})).toBe(false);
    expect(wantsColor({}, {})).toBe(false);
  });

  it('a terminal gets coloured human-readable log lines', async () => {
    const text = await logLine(true, {});
    expect(text).toContain('something to see');
    expect(text).toContain(ESC);
  }, 20_000);

  it('NO_COLOR on a terminal: human-readable, no escape codes', async () => {
    const text = await logLine(true, { NO_COLOR: '1' });
    expect(text).toContain('something to see');
    expect(text).not.toContain(ESC);
    expect(() => JSON.parse(text)).toThrow(); // still the pretty form, not JSON
  }, 20_000);

  it('not a terminal (pipe, file, container log): JSON lines, no escape codes', async () => {
    const text = await logLine(false, {});
    expect(text).not.toContain(ESC);
    expect(JSON.parse(text.trim())).toMatchObject({ msg: 'something to see', orderNumber: 'PO-1' });
  }, 20_000);
});
