import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ReportTarget } from '../../../src/report/write-reports.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * A folder finish renames the reports into done/ and then the input: a watcher killed between
 * the two leaves reports under the input's name without the input. The instance that resumes
 * it must finish it under its own name, over those reports (found by the long chaos suite: it
 * took a timestamped name, so the input never reached done/ under its own) — and never over an
 * older input's reports.
 */
describe('a folder input resumed after a finish cut short', () => {
  let drop: string;
  let work: string;
  beforeEach(async () => {
    drop = await tempDirPerTest('htorder-folder-resume-');
    work = await tempDirPerTest('htorder-folder-resume-work-');
  });

  const source = async (n: number) => {
    const s = new FolderSource(drop, { leaseMs: 60_000, workDir: join(work, String(n)) });
    await s.init();
    return s;
  };
  const reports = (tag: string) => async (target: ReportTarget) => {
    await writeFile(target.paths.json, `{"run":"${tag}"}\n`);
    await writeFile(target.paths.csv, `run\n${tag}\n`);
    return { json: target.paths.json, csv: target.paths.csv };
  };

  /** `a.yaml` claimed by one instance, `cut` done (as its finish would), then given up as by a crash; resumed by another and finished. */
  async function resumeAfter(cut: () => Promise<void>): Promise<string> {
    await writeFile(join(drop, 'a.yaml'), 'version: 1\njobs: []\n');
    const first = await source(1);
    const claimed = (await first.claim('a.yaml'))!;
    await cut();
    await claimed.release();
    await first.close();
    const second = await source(2);
    try {
      const [orphan] = await second.claimOrphans();
      return await orphan!.finish('done', reports('resumed'));
    } finally {
      await second.close();
    }
  }

  it('takes its own name over the reports its cut-short finish placed, and drops one it does not write again', async () => {
    const final = await resumeAfter(async () => {
      await mkdir(join(drop, 'done'), { recursive: true });
      await writeFile(join(drop, 'done', 'a.yaml.result.json'), '{"run":"cut"}\n');
      await writeFile(join(drop, 'done', 'a.yaml.errors.txt'), 'from the cut-short finish\n');
    });
    expect(final).toBe(join(drop, 'done', 'a.yaml'));
    expect((await readdir(join(drop, 'done'))).sort()).toEqual(['a.yaml', 'a.yaml.result.csv', 'a.yaml.result.json']);
    expect(await readFile(join(drop, 'done', 'a.yaml.result.json'), 'utf8')).toBe('{"run":"resumed"}\n');
  });

  it('keeps an older input’s reports: those predate the claim, and the input takes a timestamped name', async () => {
    await mkdir(join(drop, 'done'), { recursive: true });
    const old = join(drop, 'done', 'a.yaml.result.json');
    await writeFile(old, '{"run":"older input"}\n');
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(old, hourAgo, hourAgo);
    const final = await resumeAfter(async () => undefined);
    expect(final).toMatch(/done\/a\.\d{8}T\d+Z\.yaml$/);
    expect(await readFile(old, 'utf8')).toBe('{"run":"older input"}\n');
  });
});
