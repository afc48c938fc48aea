import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdir, readdir, readFile, rename, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { type Clock, nowIso, offsetClock } from '../../../src/core/clock.js';
import type { ReportTarget } from '../../../src/report/write-reports.js';
import type { LedgerMark } from '../../../src/storage/ledger/ledger-mark.js';
import type { LeaseStore } from '../../../src/storage/lease.js';
import { BucketSource } from '../../../src/watch/sources/bucket-source.js';
import { FolderSource } from '../../../src/watch/sources/folder-source.js';
import {
  type ClaimedInput,
  type DropSource,
  DropTakenError,
  type FinishOutcome,
  SourceError,
} from '../../../src/watch/sources/model.js';
import { s3Fixture } from '../../support/s3.js';
import { tempDirPerTest } from '../../support/temp-files.js';

/**
 * The drop protocol's contract (src/watch/sources/drop.ts), the same cases for each store: a
 * folder and a bucket prefix. A store is only how each step is done where it keeps files; what
 * the steps are, and what a dropper, a crash or a second instance sees, is the protocol's.
 */

/** What an instance may be given: the ledger that marks its location, a LeaseStore for its claims. */
interface Extra {
  ledger?: LedgerMark;
  leases?: LeaseStore;
  clock?: Clock;
}

/** How a test reaches a store's location `loc` from outside, as a dropper or a crash would. */
interface Kit {
  /** A new instance on `loc`, initialised. */
  open(loc: string, extra?: Extra): Promise<DropSource>;
  /** Writes `path` (`a.yaml`, `done/a.yaml`) under `loc`. */
  put(loc: string, path: string, body: string): Promise<void>;
  /** Makes `path` an hour older than a claim made now (a bucket: the claim is made a second later). */
  age(loc: string, path: string): Promise<void>;
  /** The names directly in `sub` (or the top), hidden ones left out. */
  names(loc: string, sub?: string): Promise<string[]>;
  text(loc: string, path: string): Promise<string>;
  /** Where `path` is, as the store says it (finish, takeBack). */
  where(loc: string, path: string): string;
}

const fx = s3Fixture();
let root: string;
let n = 0;

const folderKit: Kit = {
  async open(loc, extra = {}) {
    const source = new FolderSource(join(root, loc), {
      leaseMs: 60_000,
      workDir: join(root, 'work', String(n++)),
      ...extra,
    });
    await source.init();
    return source;
  },
  async put(loc, path, body) {
    await mkdir(dirname(join(root, loc, path)), { recursive: true });
    await writeFile(join(root, loc, path), body);
  },
  async age(loc, path) {
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(join(root, loc, path), hourAgo, hourAgo);
  },
  async names(loc, sub = '') {
    // Files only: as a bucket's listing of one level, without the sub-folders.
    const entries = await readdir(join(root, loc, sub), { withFileTypes: true }).catch(() => []);
    return entries
      .filter((e) => e.isFile() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  },
  text: (loc, path) => readFile(join(root, loc, path), 'utf8'),
  where: (loc, path) => join(root, loc, path),
};

const bucketKit: Kit = {
  async open(loc, extra = {}) {
    const source = new BucketSource({
      store: fx.store,
      prefix: `${loc}/`,
      state: { store: fx.store, prefix: `state-${loc}/` },
      leaseMs: 60_000,
      workDir: join(root, 'work', String(n++)),
      ...extra,
    });
    await source.init();
    return source;
  },
  async put(loc, path, body) {
    await fx.s3.client.send(new PutObjectCommand({ Bucket: fx.s3.bucket, Key: `${loc}/${path}`, Body: body }));
  },
  // The store's times have whole seconds: what was put before the wait is older than a claim after it.
  age: () => sleep(1100),
  async names(loc, sub = '') {
    const prefix = sub ? `${loc}/${sub}/` : `${loc}/`;
    const listed = await fx.s3.client.send(
      new ListObjectsV2Command({ Bucket: fx.s3.bucket, Prefix: prefix, Delimiter: '/' }),
    );
    return (listed.Contents ?? [])
      .map((o) => o.Key!.slice(prefix.length))
      .filter((x) => !x.startsWith('.'))
      .sort();
  },
  async text(loc, path) {
    const got = await fx.s3.client.send(new GetObjectCommand({ Bucket: fx.s3.bucket, Key: `${loc}/${path}` }));
    return (await got.Body?.transformToString()) ?? '';
  },
  where: (_loc, path) => `s3://${fx.s3.bucket}/${_loc}/${path}`,
};

/** Writes result.json and result.csv (no errors.txt), as the pipeline would. */
const reports =
  (tag: string) =>
  async (target: ReportTarget): Promise<Record<string, string>> => {
    await writeFile(target.paths.json, `{"run":"${tag}","input":"${target.inputShownAs}"}\n`);
    await writeFile(target.paths.csv, `run\n${tag}\n`);
    return { json: target.paths.json, csv: target.paths.csv };
  };

const MANIFEST = 'version: 1\njobs: []\n';

/** Leases in memory, shared by the instances given them: claims made elsewhere than the location's own store. */
function memoryLeases(): LeaseStore & { held: Set<string>; taken: string[] } {
  const held = new Set<string>();
  const taken: string[] = [];
  return {
    leaseMs: 60_000,
    held,
    taken,
    async tryAcquire(name) {
      if (held.has(name)) return undefined;
      held.add(name);
      taken.push(name);
      let ours = true;
      return {
        lost: () => (ours ? undefined : new Error('released')),
        renew: async () => ours,
        release: async () => {
          if (ours) held.delete(name);
          ours = false;
        },
      };
    },
  };
}

describe.each([
  ['a folder', folderKit],
  ['a bucket prefix', bucketKit],
])('the drop protocol over %s', (_store, kit) => {
  let loc: string;
  const open: DropSource[] = [];
  beforeEach(async () => {
    root = await tempDirPerTest('htorder-drop-contract-');
    loc = `loc${n++}`;
    await mkdir(join(root, loc));
    return async () => {
      for (const s of open.splice(0)) await s.close();
    };
  });
  const source = async (extra?: Extra): Promise<DropSource> => {
    const s = await kit.open(loc, extra);
    open.push(s);
    return s;
  };
  const claimed = async (s: DropSource, name: string): Promise<ClaimedInput> => {
    const c = await s.claim(name);
    if (!c) throw new Error(`${name} was not claimed`);
    return c;
  };

  it('claims an input: it leaves the top for processing/, and the pipeline reads a private copy', async () => {
    await kit.put(loc, 'a.yaml', MANIFEST);
    const s = await source();
    expect((await s.list()).map((l) => l.name)).toEqual(['a.yaml']);
    // Listing decides nothing: the input stays where it was dropped until claimed.
    expect(await kit.names(loc)).toEqual(['a.yaml']);
    expect(await kit.names(loc, 'processing')).toEqual([]);
    const c = await claimed(s, 'a.yaml');
    expect(await readFile(c.path, 'utf8')).toBe(MANIFEST);
    expect(c.location).toBe(kit.where(loc, 'processing/a.yaml'));
    expect(await kit.names(loc, 'processing')).toEqual(['a.yaml']);
    expect(await s.list()).toEqual([]);
  });

  // The watcher renews the claims it holds on a timer, and may do so between an input's finish
  // and its learning that the input ended: the finish's own release is not a loss.
  it('says a claim it finished, released or requeued itself is not lost when renewed after', async () => {
    for (const name of ['a.yaml', 'b.yaml', 'c.yaml']) await kit.put(loc, name, MANIFEST);
    const s = await source();
    const [a, b, c] = [await claimed(s, 'a.yaml'), await claimed(s, 'b.yaml'), await claimed(s, 'c.yaml')];
    await a.finish('done', reports('a'));
    await b.release();
    await c.requeue();
    for (const input of [a, b, c]) expect(await input.renew(), input.name).toBe(true);
  });

  it('gives an input to one of two claimants', async () => {
    await kit.put(loc, 'a.yaml', MANIFEST);
    const [one, two] = [await source(), await source()];
    const won = (await Promise.all([one.claim('a.yaml'), two.claim('a.yaml')])).filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
  });

  it('resumes an input another instance left in processing/, and finishes it', async () => {
    await kit.put(loc, 'a.yaml', MANIFEST);
    const first = await source();
    await (await claimed(first, 'a.yaml')).release();
    const orphans = await (await source()).claimOrphans();
    expect(orphans.map((o) => o.name)).toEqual(['a.yaml']);
    expect(await orphans[0]!.finish('done', reports('resumed'))).toBe(kit.where(loc, 'done/a.yaml'));
    expect(await kit.names(loc, 'processing')).toEqual([]);
  });

  it.each(['done', 'failed', 'held'] as FinishOutcome[])(
    'finishes into %s/, the reports beside the input, which moves last',
    async (outcome) => {
      await kit.put(loc, 'a.yaml', MANIFEST);
      const c = await claimed(await source(), 'a.yaml');
      expect(await c.finish(outcome, reports(outcome))).toBe(kit.where(loc, `${outcome}/a.yaml`));
      expect(await kit.names(loc, outcome)).toEqual(['a.yaml', 'a.yaml.result.csv', 'a.yaml.result.json']);
      expect(await kit.text(loc, `${outcome}/a.yaml`)).toBe(MANIFEST);
      // The reports name the input where it ends up.
      expect(JSON.parse(await kit.text(loc, `${outcome}/a.yaml.result.json`))).toEqual({
        run: outcome,
        input: kit.where(loc, `${outcome}/a.yaml`),
      });
      expect(await kit.names(loc, 'processing')).toEqual([]);
    },
  );

  it('resumes a finish cut short under its own name, over what it had placed', async () => {
    await kit.put(loc, 'a.yaml', MANIFEST);
    const c = await claimed(await source(), 'a.yaml');
    // As a finish killed after its first report: reports under the input's name, no input.
    await kit.put(loc, 'done/a.yaml.result.json', '{"run":"cut"}\n');
    await kit.put(loc, 'done/a.yaml.errors.txt', 'from the finish cut short\n');
    await c.release();
    const [orphan] = await (await source()).claimOrphans();
    expect(await orphan!.finish('done', reports('resumed'))).toBe(kit.where(loc, 'done/a.yaml'));
    expect(await kit.names(loc, 'done')).toEqual(['a.yaml', 'a.yaml.result.csv', 'a.yaml.result.json']);
    expect(JSON.parse(await kit.text(loc, 'done/a.yaml.result.json')).run).toBe('resumed');
  });

  it('finishes under a free (timestamped) name when an older done/X is there, and leaves that alone', async () => {
    await kit.put(loc, 'done/a.yaml', 'an older drop\n');
    await kit.put(loc, 'done/a.yaml.result.json', '{"run":"older"}\n');
    await kit.age(loc, 'done/a.yaml');
    await kit.age(loc, 'done/a.yaml.result.json');
    await kit.put(loc, 'a.yaml', MANIFEST);
    const c = await claimed(await source(), 'a.yaml');
    const final = await c.finish('done', reports('newer'));
    expect(final).toMatch(/done\/a\.\d{8}T\d{9}Z\.yaml$/);
    expect(await kit.text(loc, 'done/a.yaml')).toBe('an older drop\n');
    expect(await kit.text(loc, 'done/a.yaml.result.json')).toBe('{"run":"older"}\n');
    const stamped = final.slice(final.lastIndexOf('/') + 1);
    expect(await kit.names(loc, 'done')).toContain(`${stamped}.result.json`);
  });

  it('resumes a finish cut short under a timestamped name there, beside the older input: one set of reports', async () => {
    await kit.put(loc, 'done/a.yaml', 'an older drop\n');
    await kit.age(loc, 'done/a.yaml');
    await kit.put(loc, 'a.yaml', MANIFEST);
    const c = await claimed(await source(), 'a.yaml');
    // As a finish killed after its first report, under the name stamped by the clock then.
    const stamped = 'a.20261202T010203004Z.yaml';
    await kit.put(loc, `done/${stamped}.result.json`, '{"run":"cut"}\n');
    await c.release();
    const [orphan] = await (await source()).claimOrphans();
    expect(await orphan!.finish('done', reports('resumed'))).toBe(kit.where(loc, `done/${stamped}`));
    expect(await kit.names(loc, 'done')).toEqual([
      stamped,
      `${stamped}.result.csv`,
      `${stamped}.result.json`,
      'a.yaml',
    ]);
    expect(JSON.parse(await kit.text(loc, `done/${stamped}.result.json`)).run).toBe('resumed');
  });

  it("stamps a free name with the calendar clock's time (a rehearsed later night's), not the host's", async () => {
    await kit.put(loc, 'done/a.yaml', 'an older drop\n');
    await kit.age(loc, 'done/a.yaml');
    await kit.put(loc, 'a.yaml', MANIFEST);
    const later = offsetClock(30 * 86_400_000);
    const c = await claimed(await source({ clock: later }), 'a.yaml');
    const final = await c.finish('done', reports('night 30'));
    const day = nowIso(later).slice(0, 10).replace(/-/g, '');
    expect(final).toMatch(new RegExp(`done/a\\.${day}T\\d{9}Z\\.yaml$`));
  });

  it('takes an input back from held/ to the top, its reports there removed; under a free name beside a new drop', async () => {
    await kit.put(loc, 'a.yaml', MANIFEST);
    const s = await source();
    await (await claimed(s, 'a.yaml')).finish('held', reports('held'));
    expect(await s.listHeld()).toEqual(['a.yaml']);
    expect(await s.heldHash('a.yaml')).toMatch(/^[0-9a-f]{64}$/);
    expect(await s.takeBack('a.yaml')).toBe(kit.where(loc, 'a.yaml'));
    expect(await kit.names(loc, 'held')).toEqual([]);
    expect(await kit.names(loc)).toEqual(['a.yaml']);

    // Held again, and a new drop of the same name arrives meanwhile: it keeps its name.
    await (await claimed(s, 'a.yaml')).finish('held', reports('held'));
    await kit.put(loc, 'a.yaml', 'version: 1\n# a new drop\njobs: []\n');
    const back = await s.takeBack('a.yaml');
    expect(back).toMatch(/a\.\d{8}T\d{9}Z\.yaml$/);
    expect(await kit.text(loc, 'a.yaml')).toBe('version: 1\n# a new drop\njobs: []\n');
    expect(await s.takeBack('gone.yaml')).toBeUndefined();
  });

  it('is marked as its ledger’s: a watcher of another ledger is refused, one of the same ledger runs', async () => {
    const ledger = (id: string, replace = false): LedgerMark => ({
      id: async () => id,
      where: `ledger ${id}`,
      replace,
    });
    await source({ ledger: ledger('ledger-a') });
    await source({ ledger: ledger('ledger-a') });
    const refused = await kit.open(loc, { ledger: ledger('ledger-b') }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DropTakenError);
    expect(String(refused)).toMatch(/another ledger.*ledger ledger-a.*--replace-ledger/s);
    // Deliberately pointed at the new ledger: the mark is rewritten, and the old ledger's watcher is refused.
    await source({ ledger: ledger('ledger-b', true) });
    await expect(kit.open(loc, { ledger: ledger('ledger-a') })).rejects.toBeInstanceOf(DropTakenError);
  });

  it('claims through the LeaseStore it is given instead of its own (a database’s)', async () => {
    await kit.put(loc, 'a.yaml', MANIFEST);
    const leases = memoryLeases();
    const [one, two] = [await source({ leases }), await source({ leases })];
    const won = (await Promise.all([one.claim('a.yaml'), two.claim('a.yaml')])).filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
    expect(leases.taken).toHaveLength(1);
    expect(await won[0]!.finish('done', reports('leased'))).toBe(kit.where(loc, 'done/a.yaml'));
    expect(leases.held.size).toBe(0);
  });

  it.runIf(kit === folderKit)(
    'refuses to finish through a sub-folder swapped while watched (a bucket’s prefixes are names, not folders)',
    async () => {
      await kit.put(loc, 'a.yaml', MANIFEST);
      const c = await claimed(await source(), 'a.yaml');
      await rename(join(root, loc, 'done'), join(root, loc, 'elsewhere'));
      await mkdir(join(root, loc, 'done'));
      await expect(c.finish('done', reports('swapped'))).rejects.toBeInstanceOf(SourceError);
      expect(await kit.names(loc, 'done')).toEqual([]);
      expect(await kit.names(loc, 'processing')).toEqual(['a.yaml']);
    },
  );
});
