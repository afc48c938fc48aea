import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { loadMapping } from '../../src/manifest/mapping/load-mapping.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * The files a mapping names (lookup tables, the mapping it `extends`) are read only from the
 * mapping's own folder, never through a symbolic link, and an error about one never shows a
 * line of it: a link beside a mapping once led a lookup to a secret file and its first line was
 * printed as "its columns"; `extends` took any path.
 */

const SECRET = 'clientSecret-ultra-secret-value-42';

/** A folder holding a secret (outside) and a mapping folder (maps) beside it. */
async function layout(): Promise<{ maps: string; secret: string; outside: string }> {
  const root = await tempDirPerTest();
  const outside = join(root, 'private');
  mkdirSync(outside);
  const secret = join(outside, 'secret.txt');
  writeFileSync(secret, `${SECRET},more\nline two\n`, { mode: 0o600 });
  const maps = join(root, 'maps');
  mkdirSync(maps);
  return { maps, secret, outside };
}

function mapping(maps: string, text: string): string {
  const file = join(maps, 'erp.yaml');
  writeFileSync(file, `columns: { PO: orderNumber }\n${text}`);
  return file;
}

async function refusal(file: string): Promise<string> {
  const err = await loadMapping(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UsageError);
  const message = (err as Error).message;
  expect(message).not.toContain(SECRET);
  return message;
}

describe('a mapping reads the files it names only inside its folder', () => {
  it('refuses a lookup table that is a symbolic link to a file outside, without showing its content', async () => {
    const { maps, secret } = await layout();
    symlinkSync(secret, join(maps, 'skus.csv'));
    const file = mapping(maps, 'lookups:\n  skus: { file: skus.csv, key: sku }\n');
    expect(await refusal(file)).toMatch(
      /erp\.yaml:3:\d+: lookups\.skus\.file: lookup file "skus\.csv" is a symbolic link/,
    );
  });

  it('refuses a lookup table reached through a linked folder', async () => {
    const { maps, outside } = await layout();
    symlinkSync(outside, join(maps, 'tables'));
    const file = mapping(maps, 'lookups:\n  skus: { file: tables/secret.txt, key: sku }\n');
    expect(await refusal(file)).toMatch(
      /lookups\.skus\.file: lookup file "tables\/secret\.txt" is outside the mapping's folder/,
    );
  });

  it('refuses a FIFO as a lookup table instead of waiting on it', async () => {
    const { maps } = await layout();
    execFileSync('mkfifo', [join(maps, 'skus.csv')]);
    const file = mapping(maps, 'lookups:\n  skus: { file: skus.csv }\n');
    expect(await refusal(file)).toMatch(/lookup file "skus\.csv" is not a regular file/);
  });

  it('names a missing key column without listing the columns it found', async () => {
    const { maps } = await layout();
    writeFileSync(join(maps, 'skus.csv'), `${SECRET},b\n1,2\n`);
    const file = mapping(maps, 'lookups:\n  skus: { file: skus.csv, key: sku }\n');
    expect(await refusal(file)).toMatch(/"skus\.csv" has no column "sku" in its first line/);
  });

  it('refuses an extends outside the folder, by absolute path, by .., or through a link', async () => {
    const { maps, secret } = await layout();
    const base = join(maps, '..', 'private', 'base.yaml');
    writeFileSync(base, 'constants: { country: US }\n');
    for (const target of [base, '../private/base.yaml', secret]) {
      const file = mapping(maps, `extends: ${target}\n`);
      expect(await refusal(file)).toMatch(
        /extends: ".*" is neither a preset .* nor a mapping file in the mapping's folder/,
      );
    }
    symlinkSync(secret, join(maps, 'base.yaml'));
    const file = mapping(maps, 'extends: ./base.yaml\n');
    expect(await refusal(file)).toMatch(/extends: "\.\/base\.yaml" .*: the file is a symbolic link/);
  });

  it('still reads lookup tables and bases in the folder and its own subfolders, and presets', async () => {
    const { maps } = await layout();
    mkdirSync(join(maps, 'common'));
    writeFileSync(join(maps, 'common', 'skus.csv'), 'sku,variantCode\nA1,V1\n');
    writeFileSync(
      join(maps, 'common', 'base.yaml'),
      'constants: { country: US }\nlookups:\n  skus: { file: skus.csv, key: sku }\n',
    );
    const file = mapping(maps, 'extends: ./common/base.yaml\n');
    const loaded = await loadMapping(file);
    expect(loaded.constants).toEqual({ country: 'US' });
    expect(loaded.lookupTables?.skus.rows.get('A1')).toEqual({ sku: 'A1', variantCode: 'V1' });
    writeFileSync(file, 'extends: shopify\n');
    expect((await loadMapping(file)).fields).toBeDefined();
  });
});
