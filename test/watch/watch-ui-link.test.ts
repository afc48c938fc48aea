import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWatch } from '../../src/app/watch-daemon.js';
import { sink } from '../support/sink.js';
import { watchFixture } from '../support/watch-harness.js';

/**
 * `watch --ui` hands its user the dashboard's link with its token where they look when they
 * start it (the terminal), outside the log, and names the file that keeps it; output that is
 * not a terminal (a service's journal, a file) is a log, and gets the address and the file only.
 */

const fx = watchFixture('htorder-ui-link-');

/** Starts `watch --ui` on the fixture's folder, stops it once ready; what it wrote to stderr. */
async function startAndStop(terminal: boolean): Promise<{ stderr: string; link: string }> {
  const stderr = sink();
  if (terminal) Object.assign(stderr.stream, { isTTY: true });
  const abort = new AbortController();
  let link = '';
  const code = await runWatch(
    { target: fx.drop.path, flags: {}, ui: true },
    {
      stderr: stderr.stream,
      env: { ...fx.env, HTORDER_LOG_LEVEL: 'info' },
      cwd: fx.drop.path,
      signal: abort.signal,
      onReady: (info) => {
        link = info.uiUrl ?? '';
        abort.abort();
      },
    },
  );
  expect(code).toBe(0);
  return { stderr: stderr.text(), link };
}

describe('watch --ui: the link with its token', () => {
  it('on a terminal: printed in full with the file that keeps it, never in a log line', async () => {
    const { stderr, link } = await startAndStop(true);
    const token = new URL(link).searchParams.get('token') as string;
    const file = join(fx.state.path, 'ui', `${new URL(link).port}.url`);
    expect(stderr).toContain(`htorder watch: dashboard: ${link}\n`);
    expect(stderr).toContain(`the link with its token is also in ${file} (readable by this user only)`);
    expect(readFileSync(file, 'utf8')).toBe(`${link}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Only the one line made for the person holds it: no log line does.
    expect(stderr.split('\n').filter((l) => l.includes(token))).toEqual([`htorder watch: dashboard: ${link}`]);
  });

  it('elsewhere (a journal, a file): the address and the file, not the token', async () => {
    const { stderr, link } = await startAndStop(false);
    const token = new URL(link).searchParams.get('token') as string;
    const { origin, port } = new URL(link);
    const file = join(fx.state.path, 'ui', `${port}.url`);
    expect(stderr).toContain(
      `htorder watch: dashboard at ${origin}/: open the link in ${file} (readable by this user only; it holds the token)\n`,
    );
    expect(stderr).not.toContain(token);
    // The log names the file too.
    const ready = stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => 'uiLink' in l);
    expect(ready?.uiLink).toBe(file);
  });
});
