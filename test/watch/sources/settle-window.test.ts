import { lstat, mkdir, open, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InputEvent } from '../../../src/watch/events.js';
import { isLeaseToken } from '../../../src/storage/folder-lease.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import type { ClaimedInput } from '../../../src/watch/sources/model.js';
import { WatchScheduler } from '../../../src/watch/scheduler.js';
import type { SettleEvent } from '../../../src/watch/settle-window.js';
import { settleFinished } from '../../../src/watch/watcher.js';
import { tempDir } from '../../support/temp-files.js';
import { startWatch, waitFor, watchFixture, type RunningWatch } from '../../support/watch-harness.js';
import { CODED_ADDRESS } from '../../support/yaml-manifests.js';

/**
 * The settle window (docs/watch.md#the-settle-window): a writer that pauses past the stable
 * time and goes on writing into the same open file after it was moved to done/ or failed/ has
 * its file given back and processed again in full, each order submitted once. Nothing is
 * timed: each writer pauses until the watcher has moved its file (a condition polled for).
 */

const fx = watchFixture('htorder-settle-');
const HEADER = 'version: 1\njobs:\n';
/** A job of two item lines, each a flow mapping: a cut inside one is not valid YAML. */
const job = (orderNumber: string): string =>
  `  - orderNumber: ${orderNumber}\n${CODED_ADDRESS}    items:\n` +
  '      - { itemType: Asset, code: A10001, quantity: 50 }\n' +
  '      - { itemType: Asset, code: A10001, quantity: 25 }\n';
const jobs = (prefix: string, from: number, to: number): string =>
  Array.from({ length: to - from + 1 }, (_, i) => job(`${prefix}-${from + i}`)).join('');
const names = (prefix: string): string[] => Array.from({ length: 6 }, (_, i) => `${prefix}-${i + 1}`);

/** Every job created on the sandbox (a duplicate shows twice), with its lines' quantities. */
const created = async (): Promise<[string, number[]][]> =>
  (await fx.sandbox.admin.jobs())
    .map((j): [string, number[]] => [
      j.orderNumber ?? '?',
      ((j.request as { items?: { quantity?: number }[] }).items ?? []).map((i) => i.quantity ?? 0),
    ])
    .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
const ls = async (sub = ''): Promise<string[]> =>
  (await readdir(join(fx.drop.path, sub)).catch(() => [])).filter((n) => !isLeaseToken(n)).sort();
const has = (sub: string, name: string) => async (): Promise<true | undefined> =>
  (await ls(sub)).includes(name) ? true : undefined;
/**
 * The statuses of done/NAME's result report once it lists `n` jobs (the report of the complete
 * file) and the input is beside it (reports are put in place first, the input moved last).
 */
const statusesOnceComplete = (name: string, n: number) => async (): Promise<Record<string, string> | undefined> => {
  if (!(await has('done', name)())) return undefined;
  const text = await readFile(join(fx.drop.path, 'done', `${name}.result.json`), 'utf8').catch(() => undefined);
  const report = text && (JSON.parse(text) as { jobs: { orderNumber: string; status: string }[] });
  return report && report.jobs.length === n
    ? Object.fromEntries(report.jobs.map((j) => [j.orderNumber, j.status]))
    : undefined;
};
const requeuedAfterMove = (ws: RunningWatch[]): InputEvent[] =>
  ws
    .flatMap((w) => w.events())
    .filter(
      (e): e is InputEvent =>
        e.kind === 'input' && e.phase === 'requeued' && /after it was moved/.test(e.problem ?? ''),
    );
const requeuedCount = async (w: RunningWatch): Promise<number> => {
  const text = await (await fetch(`${w.healthUrl}/metrics`)).text();
  return Number(/htorder_watch_files_total\{outcome="requeued"\} (\d+)/.exec(text)?.[1] ?? 0);
};

describe('a writer that goes on writing after its file was moved out', () => {
  let ws: RunningWatch[] = [];
  beforeEach(async () => {
    const flags = { healthPort: 0, settleWindowMs: 60_000 };
    ws = [
      await startWatch({ target: fx.drop.path, flags }, fx.env),
      await startWatch({ target: fx.drop.path, flags }, fx.env),
    ];
  });
  afterEach(async () => {
    await Promise.all(ws.map((w) => w.stop()));
  });

  it('two watchers, half a 6-order file (cut inside a job), then the rest into the same open file: each order once, in done/', async () => {
    const whole = HEADER + jobs('HALF', 1, 6);
    // Cut inside the fourth job's first item line: the first part does not parse.
    const cut = whole.indexOf('quantity: 50', whole.indexOf('HALF-4'));
    const writer = await open(join(fx.drop.path, 'a.yaml'), 'a');
    try {
      await writer.write(whole.slice(0, cut));
      // Paused past the stable time: the half was claimed, failed to parse and went to failed/.
      await waitFor(has('failed', 'a.yaml'), 'the half in failed/');
      expect(await created()).toEqual([]);
      await writer.write(whole.slice(cut));
    } finally {
      await writer.close();
    }
    const statuses = await waitFor(statusesOnceComplete('a.yaml', 6), 'the complete file done');
    expect(statuses).toEqual(Object.fromEntries(names('HALF').map((n) => [n, 'submitted'])));
    expect(await created()).toEqual(names('HALF').map((n) => [n, [50, 25]]));
    expect(await readFile(join(fx.drop.path, 'done', 'a.yaml'), 'utf8')).toBe(whole);
    // The half's errors.txt went with it: failed/ holds nothing of the file that completed.
    expect(await ls('failed')).toEqual([]);
    expect(await ls('done')).toEqual(['a.yaml', 'a.yaml.result.csv', 'a.yaml.result.json']);
    expect(requeuedAfterMove(ws)).toHaveLength(1);
    expect(requeuedAfterMove(ws)[0].problem).toMatch(
      /^changed after it was moved to failed\/ \(its size changed from \d+ to \d+ bytes\): given back; will be processed again once stable/,
    );
    expect((await requeuedCount(ws[0])) + (await requeuedCount(ws[1]))).toBe(1);
  });

  it('two watchers, a writer paused at a job boundary until after the move to done/: the rest submitted once, in done/', async () => {
    const path = join(fx.drop.path, 'b.yaml');
    const writer = await open(path, 'a');
    try {
      await writer.write(HEADER + jobs('EDGE', 1, 3));
      await waitFor(has('done', 'b.yaml'), 'the first three jobs done');
      expect((await created()).map(([n]) => n)).toEqual(['EDGE-1', 'EDGE-2', 'EDGE-3']);
      await writer.write(jobs('EDGE', 4, 6));
    } finally {
      await writer.close();
    }
    const statuses = await waitFor(statusesOnceComplete('b.yaml', 6), 'the complete file done');
    expect(statuses).toEqual({
      'EDGE-1': 'already-submitted',
      'EDGE-2': 'already-submitted',
      'EDGE-3': 'already-submitted',
      'EDGE-4': 'submitted',
      'EDGE-5': 'submitted',
      'EDGE-6': 'submitted',
    });
    expect(await created()).toEqual(names('EDGE').map((n) => [n, [50, 25]]));
    expect(await ls('done')).toEqual(['b.yaml', 'b.yaml.result.csv', 'b.yaml.result.json']);
    expect(await ls()).toEqual(['.htorder-ledger', 'done', 'failed', 'held', 'processing']);
    const logged = ws.flatMap((w) => w.logs()).filter((l) => l.msg === 'input requeued');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ outcome: 'requeued', file: path, from: join(fx.drop.path, 'done', 'b.yaml') });
  });
});

describe('FolderSource and the scheduler: the settle window', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let told: SettleEvent[];
  let scheduler: WatchScheduler<ClaimedInput>;
  const source = (settleWindowMs = 60_000): FolderSource => {
    scheduler = new WatchScheduler<ClaimedInput>({ needsStability: true, settleWindowMs });
    return new FolderSource(dir.path, { leaseMs: 60_000, workDir: join(dir.path, '.work') });
  };
  beforeEach(async () => {
    dir = await tempDir('htorder-settle-src-');
    told = [];
  });
  afterEach(async () => {
    await dir.remove();
  });
  const sub = (...p: string[]): string => join(dir.path, ...p);
  /** Claims `name` and moves it to `outcome` with an errors.txt, as a watcher finishes it (and tells its scheduler). */
  const finish = async (s: FolderSource, name: string, outcome: 'done' | 'failed'): Promise<void> => {
    const c = (await s.claim(name))!;
    await c.finish(outcome, async (to) => {
      await writeFile(to.paths.errors, 'cut short\n');
      return { errors: to.paths.errors };
    });
    if (c.moved) scheduler.finished(c.moved, Date.now());
  };
  /** A scan as the watcher makes it: the settle window's looks and moves, then the listing (which moves nothing). */
  const scan = async (s: FolderSource) => {
    await settleFinished(scheduler, s, (e) => told.push(e));
    return s.list();
  };

  it('gives a grown file back to the top beside a new file of its name, its reports removed', async () => {
    const s = source();
    await s.init();
    try {
      await writeFile(sub('c.yaml'), 'version: 1\n');
      await finish(s, 'c.yaml', 'failed');
      await writeFile(sub('failed', 'c.yaml'), 'jobs: []\n', { flag: 'a' });
      await writeFile(sub('c.yaml'), 'a new drop of the same name\n');
      const listed = (await scan(s)).map((l) => l.name).sort();
      expect(listed).toEqual([expect.stringMatching(/^c\.\d{8}T\d{9}Z\.yaml$/), 'c.yaml']);
      const back = listed.find((n) => n !== 'c.yaml')!;
      expect(await readFile(sub(back), 'utf8')).toBe('version: 1\njobs: []\n');
      expect(await readFile(sub('c.yaml'), 'utf8')).toBe('a new drop of the same name\n');
      expect(await readdir(sub('failed'))).toEqual([]);
      expect(told).toEqual([
        {
          kind: 'requeued',
          name: 'c.yaml',
          outcome: 'failed',
          from: sub('failed', 'c.yaml'),
          to: sub(back),
          what: 'its size changed from 11 to 20 bytes',
        },
      ]);
    } finally {
      await s.close();
    }
  });

  it('forgets a file replaced by another (another inode), and watches nothing with a window of 0', async () => {
    for (const windowMs of [60_000, 0]) {
      await dir.remove();
      dir = await tempDir('htorder-settle-src-');
      const s = source(windowMs);
      await s.init();
      try {
        await writeFile(sub('d.yaml'), 'version: 1\n');
        await finish(s, 'd.yaml', 'done');
        if (windowMs > 0) {
          await writeFile(sub('done', 'd.yaml.new'), 'version: 1\njobs: []\n');
          await rename(sub('done', 'd.yaml.new'), sub('done', 'd.yaml'));
        } else await writeFile(sub('done', 'd.yaml'), 'jobs: []\n', { flag: 'a' });
        expect(await scan(s)).toEqual([]);
        expect(await readdir(sub('done'))).toContain('d.yaml');
        expect(told).toEqual([]);
      } finally {
        await s.close();
      }
    }
  });

  it('never gives back through a done/ folder swapped with a link: told, nothing moved', async () => {
    const s = source();
    await s.init();
    try {
      await writeFile(sub('e.yaml'), 'version: 1\n');
      await finish(s, 'e.yaml', 'done');
      await writeFile(sub('done', 'e.yaml'), 'jobs: []\n', { flag: 'a' });
      // Someone renames done/ away and puts a link to a folder of theirs in its place.
      await rename(sub('done'), sub('moved-away'));
      await mkdir(sub('.theirs'));
      await symlink(sub('.theirs'), sub('done'));
      expect(await scan(s)).toEqual([]);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatchObject({ kind: 'error', name: 'e.yaml', outcome: 'done' });
      expect((await lstat(sub('moved-away', 'e.yaml'))).isFile()).toBe(true);
    } finally {
      await s.close();
    }
  });
});
