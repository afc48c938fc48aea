import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/**
 * The browser of the dashboard's tests: the Chromium that ships inside the npm package
 * @sparticuz/chromium (a devDependency, so `npm ci` brings it: nothing to install by hand,
 * nothing downloaded at run time), unpacked into the test file's own temporary folder, driven
 * by playwright-core (which downloads no browser). CHROMIUM_PATH picks another one, such as
 * Debian's /usr/bin/chromium.
 */
async function executable(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  // Unpacks into os.tmpdir(): the test file's private TMPDIR (test/support/temp-root.ts).
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}

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

/** Why no browser starts on this machine, or undefined when one does (closed again at once). */
export async function browserMissing(): Promise<string | undefined> {
  try {
    const browser = await launch();
    await browser.close();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A fresh browser profile (its own user-data-dir), removed on close. */
export async function launch(
  opts: { httpCredentials?: { username: string; password: string } } = {},
): Promise<Browser> {
  const path = await executable();
  const profile = await mkdtemp(join(tmpdir(), 'htorder-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: path,
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
    throw new Error(`cannot start the browser ${path}: ${(err as Error).message}`);
  }
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
