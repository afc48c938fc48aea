import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDashboard } from '../../src/ui/dashboard.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A dropper who may write the drop folder swaps its done/ for a link to another tenant's folder
 * and back, as fast as it can, while the real dashboard serves: nothing of the other folder may
 * be listed, shown or downloaded.
 */

/** A second process: done/ is the real folder, then absent, then a link to `other`, and again. */
const SWAPPER = `
const fs = require('node:fs');
const path = require('node:path');
const [root, other] = process.argv.slice(1);
const done = path.join(root, 'done');
const real = path.join(root, '.done-real');
const link = path.join(root, '.done-link');
fs.symlinkSync(other, link);
for (;;) {
  fs.renameSync(done, real);
  fs.renameSync(link, done);
  fs.renameSync(done, link);
  fs.renameSync(real, done);
}
`;

const report = (orderNumber: string): string =>
  JSON.stringify({
    startedAt: '2026-11-21T06:00:00.000Z',
    jobs: [{ index: 0, orderNumber, status: 'submitted', jobNumber: 700001, items: [] }],
  });

describe('the dashboard while done/ is swapped for a link (race with a second process)', () => {
  it('never lists, shows or serves the folder the link points at', async () => {
    const root = await tempDirPerTest('htorder-ui-swap-');
    const other = await tempDirPerTest('htorder-ui-tenant-');
    const secret = `OTHER-TENANT-${randomUUID()}`;
    await mkdir(join(root, 'done'));
    await writeFile(join(root, 'done/a.yaml.result.json'), report('OURS-1'));
    await writeFile(join(other, 'a.yaml.result.json'), report(secret), { mode: 0o600 });
    await writeFile(join(other, 'b.yaml.result.json'), report(secret), { mode: 0o600 });
    const layout = { processing: 'processing', done: 'done', failed: 'failed' };
    const dashboard = await startDashboard({ root, layout, port: 0, host: '127.0.0.1' });
    const headers = { authorization: `Bearer ${new URL(dashboard.openUrl).searchParams.get('token')}` };
    const swapper = spawn(process.execPath, ['-e', SWAPPER, root, other], { stdio: 'ignore' });
    const paths = [
      '',
      'orders',
      'file?id=done%2Fa.yaml&kind=json',
      'input?id=done%2Fa.yaml',
      'file?id=done%2Fb.yaml&kind=json',
    ];
    let ours = 0;
    let asked = 0;
    try {
      const until = Date.now() + 4_000;
      const client = async (): Promise<void> => {
        while (Date.now() < until) {
          for (const path of paths) {
            const res = await fetch(`${dashboard.url}${path}`, { headers });
            const text = await res.text();
            asked += 1;
            expect(text, path).not.toContain(secret);
            if (text.includes('OURS-1')) ours += 1;
            // Past the cache of a fresh listing (200 ms), every few requests list the folders again.
            await new Promise((r) => setTimeout(r, 5));
          }
        }
      };
      await Promise.all(Array.from({ length: 4 }, client));
    } finally {
      swapper.kill();
      await dashboard.close();
    }
    // The dashboard went on serving its own folder meanwhile.
    expect(asked).toBeGreaterThan(100);
    expect(ours).toBeGreaterThan(0);
  }, 30_000);
});
