/**
 * package-lock.json names each package's download address, so a fresh `npm ci` fetches the
 * tarballs without first asking the registry for each package's document; and the project's
 * `.npmrc` keeps npm from leaving the addresses out when it next writes the lock.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error build/ is plain JavaScript without declarations
import { fromRegistry, missingAddresses, tarballUrl } from '../../build/lock-addresses.mjs';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
type Entry = { version?: string; resolved?: string; integrity?: string; link?: boolean; name?: string };
const lock = JSON.parse(readFileSync(root('package-lock.json'), 'utf8')) as { packages: Record<string, Entry> };

describe('the lock’s download addresses', () => {
  it('gives every package from the registry its tarball’s address', () => {
    expect(missingAddresses(lock)).toEqual([]);
    const wrong = Object.entries(lock.packages)
      .filter(([p, e]) => fromRegistry(p, e) && e.resolved !== tarballUrl(p, e))
      .map(([p, e]) => `${p}: ${e.resolved}`);
    expect(wrong).toEqual([]);
  });

  it('tells the registry’s address of plain, scoped, nested and aliased packages', () => {
    const e = (version: string, name?: string) => ({ version, integrity: 'sha512-x', ...(name ? { name } : {}) });
    expect(tarballUrl('node_modules/yaml', e('2.9.1'))).toBe('https://registry.npmjs.org/yaml/-/yaml-2.9.1.tgz');
    expect(tarballUrl('node_modules/@aws-sdk/core', e('3.981.0'))).toBe(
      'https://registry.npmjs.org/@aws-sdk/core/-/core-3.981.0.tgz',
    );
    expect(tarballUrl('node_modules/a/node_modules/@s/b', e('1.0.0'))).toBe(
      'https://registry.npmjs.org/@s/b/-/b-1.0.0.tgz',
    );
    expect(tarballUrl('node_modules/alias', e('1.2.3', 'real'))).toBe(
      'https://registry.npmjs.org/real/-/real-1.2.3.tgz',
    );
  });

  it('finds an entry without one, and leaves the project and links alone', () => {
    const packages = {
      '': { version: '0.1.0' },
      'node_modules/linked': { link: true, version: '1.0.0', integrity: 'sha512-x' },
      'node_modules/plain': { version: '1.0.0', integrity: 'sha512-x' },
    };
    expect(missingAddresses({ packages })).toEqual(['node_modules/plain']);
  });

  it('keeps npm from leaving them out when it writes the lock', () => {
    expect(readFileSync(root('.npmrc'), 'utf8')).toMatch(/^omit-lockfile-registry-resolved=false$/m);
  });
});
