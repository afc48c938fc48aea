import { chmod, chown, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runTrack } from '../../src/cli/commands/track.js';
import type { ResultReport } from '../../src/report/model.js';
import { startLoopback } from '../support/loopback-server.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * `htorder track DIR` over a folder others may write: a report planted there, or one that
 * others may change, names another order's job so that the operator's run writes that order's
 * tracking and signed invoice link into it and tells the webhooks it was dispatched. Reports not
 * the operator's own are not read; of those read, only the jobs the ledger records for their
 * order are followed. And `track` keeps a report's mode and group, and gives its tracking file
 * no more.
 */

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

const HOUR = 3_600_000;
const isRoot = process.getuid?.() === 0;

async function track(paths: string[], env: Record<string, string> = {}) {
  const out = sink();
  const err = sink();
  const code = await runTrack(
    paths,
    {},
    { stdout: out.stream, stderr: err.stream, env: { ...h.env(), ...env }, cwd: h.workDir },
  );
  return { code, stdout: out.text(), stderr: err.text() };
}

/** Orders run by the operator (one input each), then despatched on the sandbox clock. */
async function despatched(...orders: string[]): Promise<Map<string, { file: string; jobNumber: number }>> {
  const out = new Map<string, { file: string; jobNumber: number }>();
  for (const order of orders) {
    const file = await h.write(`${order}.yaml`, manifest([{ orderNumber: order, items: ITEMS.reorder }]));
    const r = await h.cli('run', [file]);
    expect(r.code, r.stderr).toBe(0);
    out.set(order, { file, jobNumber: (await h.report(file)).jobs[0]!.jobNumber! });
  }
  await h.sandbox.admin.advanceClock(49 * HOUR);
  return out;
}

/** A report naming `jobNumber` as the job of `orderNumber`, written at `path` (mode 0644). */
async function plant(path: string, from: string, orderNumber: string, jobNumber: number): Promise<string> {
  const report = JSON.parse(await readFile(`${from}.result.json`, 'utf8')) as ResultReport;
  report.jobs[0]!.orderNumber = orderNumber;
  report.jobs[0]!.jobNumber = jobNumber;
  const text = JSON.stringify(report);
  await writeFile(path, text, { mode: 0o644 });
  return text;
}

describe('track DIR: planted and foreign reports', () => {
  it.skipIf(!isRoot)(
    "a report another user owns is not read: another order's tracking is not written into it, no webhook",
    async () => {
      const orders = await despatched('V-1');
      const victim = orders.get('V-1')!;
      const shared = join(h.workDir, 'shared');
      await mkdir(shared, { mode: 0o1777 });
      await chmod(shared, 0o1777);
      const evil = join(shared, 'evil.yaml.result.json');
      const planted = await plant(evil, victim.file, 'V-1', victim.jobNumber);
      await chown(evil, 4242, 4242);
      const hook = await startLoopback((_req, res) => {
        res.end('ok');
      });
      try {
        const t = await track([shared], { HTORDER_NOTIFY_URL: `${hook.url}/hook`, HTORDER_NOTIFY_ON: 'dispatched' });
        expect(t.stderr).toContain(
          `${evil}: not read: it belongs to uid 4242, not to you (uid 0); its jobs are not followed\n`,
        );
        expect(t.stderr).toContain('no submitted jobs to follow');
        expect(t.code).toBe(2);
        expect(await readFile(evil, 'utf8')).toBe(planted);
        expect(hook.seen).toEqual([]);
      } finally {
        await hook.close();
      }
    },
  );

  it('a report group or others may write, or a link, is not read; one line each', async () => {
    const orders = await despatched('V-1');
    const victim = orders.get('V-1')!;
    const shared = join(h.workDir, 'shared');
    await mkdir(shared);
    const writable = join(shared, 'open.yaml.result.json');
    const planted = await plant(writable, victim.file, 'V-1', victim.jobNumber);
    await chmod(writable, 0o666);
    await symlink(`${victim.file}.result.json`, join(shared, 'link.yaml.result.json'));
    const t = await track([shared]);
    const lines = t.stderr.split('\n').filter((l) => l.includes('not read'));
    expect(lines).toEqual([
      `htorder track: ${join(shared, 'link.yaml.result.json')}: not read: it is a symbolic link`,
      `htorder track: ${writable}: not read: group or others may write it (mode 0666); its jobs are not followed`,
    ]);
    expect(await readFile(writable, 'utf8')).toBe(planted);
  });

  it("follows only the jobs the ledger records for the report's order: another order's job is not followed", async () => {
    const orders = await despatched('V-1', 'M-1');
    const victim = orders.get('V-1')!;
    const mine = orders.get('M-1')!;
    const hook = await startLoopback((_req, res) => {
      res.end('ok');
    });
    try {
      // The operator's own private report, its job number changed to the victim's order's.
      const report = `${mine.file}.result.json`;
      await plant(report, mine.file, 'M-1', victim.jobNumber);
      await chmod(report, 0o600);
      const env = { HTORDER_NOTIFY_URL: `${hook.url}/hook`, HTORDER_NOTIFY_ON: 'dispatched' };
      const t = await track([report], env);
      expect(t.stderr).toContain(
        `${report}: job ${victim.jobNumber} (order M-1) is not followed: the ledger does not record it as this account's job for that order\n`,
      );
      const after = JSON.parse(await readFile(report, 'utf8')) as ResultReport;
      expect(after.jobs[0]!.tracking).toBeUndefined();
      expect(hook.seen).toEqual([]);
      // The victim's own report, named with it, is followed as ever.
      const both = await track([report, victim.file], env);
      expect(both.code, both.stderr).toBe(0);
      expect((await h.report(victim.file)).jobs[0]!.tracking?.status).toBe('Dispatched');
      expect(
        hook.seen.map((r) => (JSON.parse(r.body) as { dispatch: { orderNumber: string } }).dispatch.orderNumber),
      ).toEqual(['V-1']);
    } finally {
      await hook.close();
    }
  });
});

describe('track keeps permissions', () => {
  it("rewrites a private report as private, in its group, and its tracking file gets no more than the report's mode", async () => {
    const orders = await despatched('P-1', 'G-1');
    const gid = isRoot ? 4243 : (await stat(h.workDir)).gid;
    const cases = [
      { file: orders.get('P-1')!.file, mode: 0o600 },
      { file: orders.get('G-1')!.file, mode: 0o640 },
    ];
    for (const c of cases) {
      await chmod(`${c.file}.result.json`, c.mode);
      await chown(`${c.file}.result.json`, process.getuid?.() ?? 0, gid);
    }
    const t = await track(cases.map((c) => c.file));
    expect(t.code, t.stderr).toBe(0);
    for (const c of cases) {
      const report = await stat(`${c.file}.result.json`);
      expect((await h.report(c.file)).jobs[0]!.tracking?.status).toBe('Dispatched');
      expect({ mode: report.mode & 0o777, gid: report.gid }).toEqual({ mode: c.mode, gid });
      const csv = await stat(`${c.file}.tracking.csv`);
      expect({ mode: csv.mode & 0o777, gid: csv.gid }).toEqual({ mode: c.mode, gid });
    }
    // One file for both: no more than either, and in their common group.
    const one = join(h.workDir, 'shipped.csv');
    expect(
      (
        await runTrackCsv(
          cases.map((c) => c.file),
          one,
        )
      ).code,
    ).toBe(0);
    const both = await stat(one);
    expect({ mode: both.mode & 0o777, gid: both.gid }).toEqual({ mode: 0o600, gid });
  });
});

async function runTrackCsv(paths: string[], file: string) {
  const out = sink();
  const err = sink();
  const code = await runTrack(
    paths,
    { trackingCsv: file },
    { stdout: out.stream, stderr: err.stream, env: h.env(), cwd: h.workDir },
  );
  return { code, stderr: err.text() };
}
