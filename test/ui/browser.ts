import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * Debian's chromium, driven by playwright-core (which downloads no browser). `.ci/run`
 * installs it when missing; a machine without it fails here with how to get it, never skips.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Without the background-networking switches a closed network refuses many connections at start. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh browser profile (its own user-data-dir), removed on close. */
export async function launch(
  opts: { httpCredentials?: { username: string; password: string } } = {},
): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'htorder-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 800 },
      deviceScaleFactor: 1,
      timezoneId: 'UTC',
      locale: 'en-GB',
      ...opts,
    });
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw new Error(
      `cannot start ${CHROMIUM} (install it: apt-get install chromium, or set CHROMIUM_PATH): ${(err as Error).message}`,
    );
  }
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
