import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WatchEvents } from '../../src/watch/events.js';
import { DropInputs, SCAN_LIMITS, type InputRecord } from '../../src/ui/drop-inputs.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * How the dashboard knows, without listing every file, that a folder's entries may have changed:
 * the folders' own times. Times are set an hour back by hand, so nothing waits for a clock.
 */

const LAYOUT = { processing: 'processing', done: 'done', failed: 'failed' };

async function folder(): Promise<string> {
  const root = await tempDirPerTest('htorder-ui-');
  for (const d of Object.values(LAYOUT)) await mkdir(join(root, d));
  return root;
}

/** Sets the folders' times an hour back, as if nothing had changed in them for that long. */
async function age(root: string): Promise<void> {
  const past = new Date(Date.now() - 3_600_000);
  for (const dir of [root, ...Object.values(LAYOUT).map((d) => join(root, d))]) await utimes(dir, past, past);
}

describe('DropInputs.foldersChanged', () => {
  it('is false while no entry came, went or was renamed over, and true once one did', async () => {
    const root = await folder();
    await writeFile(join(root, 'a.yaml'), 'jobs: []\n');
    const inputs = new DropInputs(root, LAYOUT);
    expect(await inputs.foldersChanged()).toBe(true); // never scanned
    await age(root);
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(false);

    // A file dropped by hand.
    await writeFile(join(root, 'b.yaml'), 'jobs: []\n');
    expect(await inputs.foldersChanged()).toBe(true);
    expect(await inputs.scan()).toBe(true);
    expect(inputs.list().map((r) => r.name)).toContain('b.yaml');

    // A report put in place by a rename (as every report is written) into a layout folder.
    await age(root);
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(false);
    await writeFile(join(root, 'c.tmp'), '{}');
    await age(root);
    await inputs.scan();
    await rename(join(root, 'c.tmp'), join(root, 'done/c.yaml.result.json'));
    expect(await inputs.foldersChanged()).toBe(true);
  });

  it('a folder changed moments before the scan is looked at again: a second change then may leave its time alone', async () => {
    const root = await folder();
    const inputs = new DropInputs(root, LAYOUT);
    await writeFile(join(root, 'a.yaml'), 'jobs: []\n'); // the drop folder's time is now
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(true);
  });

  it('a layout folder that appears or goes is a change', async () => {
    const root = await tempDirPerTest('htorder-ui-');
    const inputs = new DropInputs(root, LAYOUT);
    await utimes(root, new Date(0), new Date(0)); // no layout folder yet
    await inputs.scan();
    expect(await inputs.foldersChanged()).toBe(false);
    await mkdir(join(root, 'done'));
    await utimes(root, new Date(0), new Date(0));
    expect(await inputs.foldersChanged()).toBe(true);
  });
});

describe('DropInputs.list', () => {
  it('lists the names watch would take: not an Office lock file (~$x.xlsx) nor a temporary one', async () => {
    const root = await folder();
    for (const name of ['orders.xlsx', '~$orders.xlsx', 'orders.csv.part', 'orders.csv']) {
      await writeFile(join(root, name), 'x');
    }
    const inputs = new DropInputs(root, LAYOUT);
    await inputs.scan();
    expect(
      inputs
        .list()
        .map((r) => `${r.name} ${r.status}`)
        .sort(),
    ).toEqual(['orders.csv waiting', 'orders.xlsx waiting']);
  });
});

describe('DropInputs.scan past its cap of reports read', () => {
  it('reads the newest reports once and keeps them; older ones are listed unread, not parsed on every view', async () => {
    const root = await folder();
    const cap = SCAN_LIMITS.cachedReports;
    SCAN_LIMITS.cachedReports = 10;
    try {
      const report = (n: string): string =>
        JSON.stringify({ jobs: [{ orderNumber: n, status: 'submitted', jobNumber: 1 }] });
      const paths: string[] = [];
      const base = Date.now() - 3_600_000;
      for (let i = 0; i < 15; i++) {
        const path = join(root, `done/r${String(i).padStart(2, '0')}.yaml.result.json`);
        await writeFile(path, report(`OLD-${String(i).padStart(2, '0')}`));
        // r14 the newest.
        const t = new Date(base + i * 1000);
        await utimes(path, t, t);
        paths.push(path);
      }
      const inputs = new DropInputs(root, LAYOUT);
      await inputs.scan();
      // Each report rewritten in place with the same size and time: only a parse could see it.
      for (const [i, path] of paths.entries()) {
        await writeFile(path, report(`NEW-${String(i).padStart(2, '0')}`));
        const t = new Date(base + i * 1000);
        await utimes(path, t, t);
      }
      await inputs.scan();
      const orders = inputs.list().map((r) => r.digest[0]?.orderNumber ?? r.problem);
      expect(orders.filter((o) => o?.startsWith('OLD-'))).toHaveLength(10);
      expect(orders.filter((o) => o?.startsWith('NEW-'))).toHaveLength(0);
      expect(orders.filter((o) => o?.startsWith('not read'))).toHaveLength(5);
      expect(inputs.list().find((r) => r.name === 'r14.yaml')?.digest[0]?.orderNumber).toBe('OLD-14');
    } finally {
      SCAN_LIMITS.cachedReports = cap;
    }
  });
});

/** What a list shows of each input, in its order. */
const shown = (list: readonly InputRecord[]) =>
  list.map((r) => `${r.id} ${r.status} ${r.at} ${r.jobs} ${r.problem ?? ''} ${r.durationMs}`);

const plainOrder = (a: InputRecord, b: InputRecord): number => b.at - a.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

describe('DropInputs: the quick paths say what a plain listing says', () => {
  it('folders listed again by name where they changed, kept where they did not, match a fresh full listing', async () => {
    const PLACES = ['', 'done', 'failed', 'held'] as const;
    const op = fc.record({
      remove: fc.boolean(),
      place: fc.constantFrom(...PLACES),
      name: fc.integer({ min: 0, max: 7 }),
      report: fc.constantFrom('none', 'submitted', 'awaiting-approval', 'invalid'),
      startedAt: fc.integer({ min: 0, max: 5 }),
      /** Whether the folder's time is then set back, as if the change were long ago (its listing may be kept). */
      age: fc.boolean(),
    });
    const events = ['waiting', 'processing', 'done', 'held', 'retry'] as const;
    let run = 0;
    const quick = SCAN_LIMITS.quickListing;
    // Every folder that changed is listed by name, the quick path.
    SCAN_LIMITS.quickListing = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(op, fc.constantFrom(...events), fc.integer({ min: 0, max: 7 })), {
            minLength: 1,
            maxLength: 12,
          }),
          async (steps) => {
            const root = await tempDirPerTest('htorder-ui-prop-');
            for (const d of PLACES.slice(1)) await mkdir(join(root, d));
            const layout = { processing: 'processing', done: 'done', failed: 'failed', held: 'held' };
            const watch = new WatchEvents();
            const kept = new DropInputs(root, layout);
            kept.follow(watch, () => undefined);
            const told: Parameters<WatchEvents['input']>[0][] = [];
            await kept.scan();
            let clock = Date.parse('2026-01-01T00:00:00Z') + run++ * 1_000_000;
            for (const [{ remove, place, name, report, startedAt, age }, phase, who] of steps) {
              const dir = join(root, place);
              const input = join(dir, `in-${name}.yaml`);
              // A name is made only where none is (a file replaced under a known name is seen at the next full scan).
              if (remove || existsSync(input)) {
                await rm(input, { force: true });
                await rm(`${input}.result.json`, { force: true });
              } else {
                await writeFile(input, `version: 1 # ${clock}\n`);
                if (report !== 'none') {
                  await writeFile(
                    `${input}.result.json`,
                    JSON.stringify({
                      command: 'run',
                      startedAt: new Date(Date.parse('2026-01-01T00:00:00Z') + startedAt * 60_000).toISOString(),
                      jobs: [
                        { orderNumber: `O-${name}`, status: report, estimatedCost: 5, currency: 'USD', errors: [] },
                      ],
                    }),
                  );
                }
              }
              if (age) {
                clock += 1000;
                await utimes(dir, new Date(clock), new Date(clock));
              }
              const event = { name: `in-${who}.yaml`, location: '', phase, durationMs: who * 10, at: clock };
              told.push(event);
              watch.input(event);
              await kept.scan(false);
              // A fresh instance, told the same events, lists every file.
              const again = new WatchEvents();
              const fresh = new DropInputs(root, layout);
              fresh.follow(again, () => undefined);
              for (const e of told) again.input(e);
              await fresh.scan();
              const list = kept.list();
              expect(shown(list)).toEqual(shown([...list].sort(plainOrder)));
              expect(shown(list)).toEqual(shown(fresh.list()));
            }
          },
        ),
        { numRuns: 25 },
      );
    } finally {
      SCAN_LIMITS.quickListing = quick;
    }
  }, 60_000);
});

describe('DropInputs: inputs that wait for approval', () => {
  const held = (orderNumber: string, estimate: number, reason: string) => ({
    orderNumber,
    status: 'awaiting-approval',
    estimatedCost: estimate,
    currency: 'USD',
    errors: [{ code: 'approval.job-cost', message: `awaiting approval: ${reason} (htorder approve)` }],
  });

  it("lists held/ as held, with the jobs' estimate, currency and reasons", async () => {
    const root = await folder();
    await mkdir(join(root, 'held'));
    await writeFile(join(root, 'held/big.csv'), 'x');
    await writeFile(
      join(root, 'held/big.csv.result.json'),
      JSON.stringify({
        command: 'watch',
        jobs: [
          held('BIG-1', 6000, 'estimate 6,000.00 USD is over maxJobCost 500.00 USD'),
          held('BIG-2', 5550, 'estimate 5,550.00 USD is over maxJobCost 500.00 USD'),
          {
            orderNumber: 'SMALL-3',
            status: 'not-submitted',
            errors: [{ code: 'run.held-back', message: 'held back' }],
          },
        ],
      }),
    );
    const inputs = new DropInputs(root, LAYOUT);
    await inputs.scan();
    const [r] = inputs.list();
    expect(r?.id).toBe('held/big.csv');
    expect(r?.status).toBe('held');
    expect(r?.awaiting?.jobs).toBe(2);
    expect(r?.awaiting?.amount).toEqual(new Map([['USD', 11_550]]));
    expect(r?.awaiting?.reasons).toEqual([
      'BIG-1: estimate 6,000.00 USD is over maxJobCost 500.00 USD',
      'BIG-2: estimate 5,550.00 USD is over maxJobCost 500.00 USD',
    ]);
  });

  it('a run whose jobs only wait for approval is held, not failed; a plan of them is planned', async () => {
    const root = await folder();
    const report = (command: string, jobs: unknown[]) => JSON.stringify({ command, summary: { errors: 1 }, jobs });
    await writeFile(join(root, 'run.yaml'), 'x');
    await writeFile(join(root, 'run.yaml.result.json'), report('run', [held('R-1', 610, 'estimate over')]));
    await writeFile(join(root, 'plan.yaml'), 'x');
    await writeFile(join(root, 'plan.yaml.result.json'), report('plan', [held('P-1', 610, 'estimate over')]));
    await writeFile(join(root, 'bad.yaml'), 'x');
    await writeFile(
      join(root, 'bad.yaml.result.json'),
      report('run', [held('B-1', 610, 'estimate over'), { orderNumber: 'B-2', status: 'invalid' }]),
    );
    const inputs = new DropInputs(root, LAYOUT);
    await inputs.scan();
    const status = Object.fromEntries(inputs.list().map((r) => [r.name, r.status]));
    expect(status).toEqual({ 'run.yaml': 'held', 'plan.yaml': 'planned', 'bad.yaml': 'failed' });
  });

  it("a watcher's held event leaves no input waiting at the top: the folder tells where it went", async () => {
    const root = await folder();
    const events = new WatchEvents();
    const inputs = new DropInputs(root, LAYOUT);
    inputs.follow(events, () => undefined);
    events.input({ name: 'big.csv', location: join(root, 'big.csv'), phase: 'processing' });
    await inputs.scan();
    expect(inputs.list().map((r) => `${r.id} ${r.status}`)).toEqual(['live/big.csv processing']);
    await mkdir(join(root, 'held'));
    await writeFile(join(root, 'held/big.csv'), 'x');
    events.input({ name: 'big.csv', location: join(root, 'held/big.csv'), phase: 'held' });
    await inputs.scan();
    expect(inputs.list().map((r) => `${r.id} ${r.status}`)).toEqual(['held/big.csv held']);
  });
});
