#!/usr/bin/env node
/**
 * Gives every package of package-lock.json its download address (`resolved`), the registry's
 * tarball URL of its name and version, where the lock has none.
 *
 * A lock entry without an address makes `npm ci` ask the registry for the package's whole
 * document (every version it ever published) before it can fetch the tarball: some 500
 * round trips on a fresh machine, a third of a cold `npm ci`. npm leaves addresses out when
 * `omit-lockfile-registry-resolved` is set, as it is in these machines' user configuration;
 * the project's `.npmrc` turns it off for the entries npm writes from now on, and this script
 * adds the entries written before. An npm configured for another registry fetches the same
 * path from it (npm's `replace-registry-host`).
 *
 * `node build/lock-addresses.mjs` rewrites the lock in place; `--check` only says which entries
 * lack one (exit 1), as `test/build/lock-addresses.test.ts` does.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REGISTRY = 'https://registry.npmjs.org';

/** The registry's tarball URL of a lock entry at `path` (`node_modules/…/NAME`). */
export function tarballUrl(path, entry) {
  const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const base = name.slice(name.lastIndexOf('/') + 1);
  return `${REGISTRY}/${name}/-/${base}-${entry.version}.tgz`;
}

/** Entries fetched from the registry: the project itself, links and folders are not. */
export function fromRegistry(path, entry) {
  return path !== '' && !entry.link && typeof entry.version === 'string' && typeof entry.integrity === 'string';
}

/** The paths of registry entries that lack an address. */
export function missingAddresses(lock) {
  return Object.entries(lock.packages).filter(([p, e]) => fromRegistry(p, e) && !e.resolved).map(([p]) => p);
}

function main() {
  const file = fileURLToPath(new URL('../package-lock.json', import.meta.url));
  const lock = JSON.parse(readFileSync(file, 'utf8'));
  const missing = missingAddresses(lock);
  if (process.argv.includes('--check')) {
    for (const p of missing) console.error(`${p}: no "resolved"`);
    process.exitCode = missing.length > 0 ? 1 : 0;
    return;
  }
  // npm writes `resolved` right after `version`: rebuilding each entry keeps that order.
  for (const p of missing) {
    const { version, ...rest } = lock.packages[p];
    lock.packages[p] = { version, resolved: tarballUrl(p, lock.packages[p]), ...rest };
  }
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`${missing.length} entries given their address`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
