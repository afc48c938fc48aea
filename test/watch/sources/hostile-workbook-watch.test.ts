/**
 * A hostile workbook dropped into a watched folder is that input's failure: it goes to failed/
 * with a located error, once, and the watcher goes on with the next input; it is never taken
 * for an outage (kept in processing/ and retried).
 */
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { formatted } from '../../support/workbooks.js';
import { manifest } from '../../support/yaml-manifests.js';

const fx = watchFixture('htorder-watch-xlsx-');

const ls = async (sub = ''): Promise<string[]> => (await readdir(join(fx.drop.path, sub)).catch(() => [])).sort();

describe('htorder watch DIR with a hostile workbook', () => {
  it('fails the workbook into failed/ once, and orders the file dropped after it', async () => {
    const hostile = await formatted('['.repeat(100_000));
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    try {
      await copyFile(hostile, join(fx.drop.path, 'orders.xlsx'));
      await waitFor(
        async () => ((await ls('failed')).includes('orders.xlsx') ? true : undefined),
        'orders.xlsx in failed/',
      );
      await writeFile(join(fx.drop.path, 'after.yaml'), manifest('AFTER'));
      await waitFor(async () => ((await ls('done')).includes('after.yaml') ? true : undefined), 'after.yaml in done/');
      const errors = await readFile(join(fx.drop.path, 'failed', 'orders.xlsx.errors.txt'), 'utf8');
      expect(errors).toContain('a number format is 100000 characters long, over the 255 Excel allows');
      // Nothing of it stays in processing/ to be retried (the watcher's own lease file aside).
      expect((await ls('processing')).filter((n) => !n.startsWith('.htorder-lease.'))).toEqual([]);
      expect((await fx.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['AFTER-1']);
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const logs = w.logs();
    expect(logs.filter((l) => l.msg === 'claimed input' && String(l.file).endsWith('orders.xlsx'))).toHaveLength(1);
    expect(logs.filter((l) => String(l.msg).includes('will retry'))).toEqual([]);
  }, 60_000);
});
