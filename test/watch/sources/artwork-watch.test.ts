import { chown, mkdir, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from '../../support/artwork-server.js';
import { startTestS3, type TestS3 } from '../../support/s3.js';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

/**
 * Under `watch`, a dropped manifest's `artwork:` files are those of the folder it was dropped
 * in (the pipeline reads a private copy of the manifest elsewhere), with the same rules as for
 * `run`: never through a link, never out of that folder, and only files its dropper could read.
 */

const fx = watchFixture('htorder-artwatch-');
let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3({ conditional: true });
});
afterAll(async () => {
  await s3.close();
});

const env = () => ({ ...fx.env, ...s3.env, HTORDER_ARTWORK_STORE: `s3://${s3.bucket}/art/` });
const print = (file: string) => `      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerReference: tiger
        artwork: ${file}
        attributes: { Colors: 4 }
`;
const ls = async (sub: string): Promise<string[]> => (await readdir(join(fx.drop.path, sub)).catch(() => [])).sort();

/** Drops `text` as `name` (written aside, owned by `uid` when given, then renamed in whole). */
async function drop(name: string, text: string, uid?: number): Promise<void> {
  const aside = join(fx.drop.path, `.${name}.tmp`);
  await writeFile(aside, text, { mode: 0o644 });
  if (uid !== undefined) await chown(aside, uid, uid);
  await rename(aside, join(fx.drop.path, name));
}

const errorsOf = async (name: string): Promise<string[]> => {
  const report = JSON.parse(await readFile(join(fx.drop.path, 'failed', `${name}.result.json`), 'utf8'));
  return report.jobs.flatMap((j: { items: { errors: { message: string }[] }[] }) =>
    j.items.flatMap((i) => i.errors.map((e) => e.message)),
  );
};

describe('artwork files under watch', () => {
  it('an artwork file beside a dropped manifest is uploaded and its link sent', async () => {
    await mkdir(join(fx.drop.path, 'designs'));
    await writeFile(join(fx.drop.path, 'designs', 'tiger.png'), PNG);
    const w = await startWatch({ target: fx.drop.path }, env());
    try {
      await drop('tiger.yaml', manifest([{ orderNumber: 'WT-1', items: print('designs/tiger.png') }]));
      await waitFor(
        async () =>
          (await ls('done')).includes('tiger.yaml') || (await ls('failed')).includes('tiger.yaml') ? true : undefined,
        'tiger.yaml finished',
      );
      expect(await ls('failed')).toEqual([]);
      const [job] = await fx.sandbox.admin.jobs();
      const link = (job?.request as { items?: { externalArtworkUrl?: string }[] } | undefined)?.items?.[0]
        ?.externalArtworkUrl;
      expect(link).toMatch(/\/art\/[0-9a-f]{64}\.png\?/);
      expect(s3.requests.filter((r) => r.method === 'PUT' && r.path.includes('/art/')).length).toBe(1);
    } finally {
      await w.stop();
    }
  });

  it('a link out of the drop folder, or a path out of it, fails the input with its reason', async () => {
    const outside = join(fx.state.path, 'outside.png');
    await writeFile(outside, PNG, { mode: 0o600 });
    await mkdir(join(fx.drop.path, 'designs'));
    await symlink(outside, join(fx.drop.path, 'designs', 'link.png'));
    await symlink(fx.state.path, join(fx.drop.path, 'linked'));
    const w = await startWatch({ target: fx.drop.path }, env());
    try {
      await drop(
        'bad.yaml',
        manifest([
          { orderNumber: 'WB-1', items: print('designs/link.png') },
          { orderNumber: 'WB-2', items: print('linked/outside.png') },
          { orderNumber: 'WB-3', items: print('designs/missing.png') },
        ]),
      );
      await waitFor(async () => ((await ls('failed')).includes('bad.yaml') ? true : undefined), 'bad.yaml in failed/');
      const errors = await errorsOf('bad.yaml');
      expect(errors[0]).toContain('designs/link.png is a symbolic link');
      expect(errors[1]).toContain("linked/outside.png is outside the manifest's folder (through a symbolic link)");
      expect(errors[2]).toContain('designs/missing.png does not exist');
      expect(await fx.sandbox.admin.jobs()).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  it.runIf(process.getuid?.() === 0)(
    "a dropper's manifest cannot name another user's private file of the folder",
    async () => {
      await writeFile(join(fx.drop.path, 'private.png'), PNG, { mode: 0o600 });
      const w = await startWatch({ target: fx.drop.path }, env());
      try {
        await drop('theirs.yaml', manifest([{ orderNumber: 'WP-1', items: print('private.png') }]), 4242);
        await waitFor(
          async () => ((await ls('failed')).includes('theirs.yaml') ? true : undefined),
          'theirs.yaml in failed/',
        );
        expect((await errorsOf('theirs.yaml'))[0]).toContain('private.png belongs to another user');
        expect(await fx.sandbox.admin.jobs()).toEqual([]);
      } finally {
        await w.stop();
      }
    },
  );
});
