import { mkdir, readFile, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxStateFile } from '../../src/app/sandbox-state.js';
import type { Sandbox, SandboxSnapshot, SandboxStateStore } from '../../src/sandbox/index.js';
import { Caller, dtfLine, start, usJob } from '../support/sandbox-http.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * A persistent sandbox (what `--sandbox` runs): its state is saved through a store and
 * restored by the next sandbox on the same store — several of them may share it at once.
 * Real sandboxes over HTTP, the real file store of the app layer.
 */

const open: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** Stops a sandbox before the end of its test (as a process that ends would). */
async function stop(sb: Sandbox): Promise<void> {
  open.splice(open.indexOf(sb), 1);
  await sb.close();
}

async function sandboxOn(file: string): Promise<{ sb: Sandbox; us: Caller }> {
  const sb = await start({ state: new SandboxStateFile(file, { staleMs: 10_000 }) });
  open.push(sb);
  return { sb, us: new Caller(sb, 'us-demo') };
}

describe('a persistent sandbox', () => {
  it('restores jobs, their changes, filed assets and the counters after a restart', async () => {
    const file = join(await tempDirPerTest(), 'sandbox', 'state.json');
    const first = await sandboxOn(file);
    const signed = 'https://cdn.example.com/front.png?X-Amz-Signature=SECRETSIG';
    const created = await first.us.post(
      '/Jobs',
      usJob({ orderNumber: 'PO-P1', items: [dtfLine({ externalArtworkUrl: signed })] }),
    );
    expect(created.status, created.text).toBe(201);
    const { jobNumber, jobLineDetails } = created.body;
    const tag = jobLineDetails[0].newAssetSku as string;
    const other = await first.us.post('/Jobs', usJob({ orderNumber: 'PO-P2' }));
    expect((await first.us.call('PATCH', `/Jobs/${jobNumber}`, { json: { description: 'Edited' } })).status).toBe(200);
    expect((await first.us.post(`/Jobs/${other.body.jobNumber}/cancel`)).status).toBe(204);
    const before = (await first.us.get(`/Jobs/${jobNumber}`)).body;
    await stop(first.sb);
    // The request bodies are not kept: a signed artwork URL is never written to disk.
    expect(await readFile(file, 'utf8')).not.toContain('SECRETSIG');

    const second = await sandboxOn(file);
    expect((await second.us.get(`/Jobs/${jobNumber}`)).body).toEqual(before);
    expect((await second.us.get(`/Jobs/${other.body.jobNumber}`)).body.jobStatus).toBe('Cancelled');
    expect((await second.us.get(`/Assets/${tag}`)).body).toMatchObject({ assetTag: tag, priceCode: dtfLine().code });
    // Searchable, as the settle search of an unknown outcome needs.
    const found = await second.us.get('/Jobs/active?searchText=PO-P1');
    expect(found.body.items.map((j: { jobNumber: number }) => j.jobNumber)).toEqual([jobNumber]);
    expect((await second.sb.admin.jobs()).map((j) => j.orderNumber)).toEqual(['PO-P1', 'PO-P2']);
    // Counters go on: no job number or asset tag is handed out twice.
    const next = await second.us.post('/Jobs', usJob({ orderNumber: 'PO-P3', items: [dtfLine()] }));
    expect(next.body.jobNumber).toBe(other.body.jobNumber + 1);
    expect(next.body.jobLineDetails[0].newAssetSku).not.toBe(tag);
  });

  it('restores a state that holds every demo customer, each with its own history jobs', async () => {
    const file = join(await tempDirPerTest(), 'sandbox', 'state.json');
    const first = await sandboxOn(file);
    // An advance looks for the job in every customer, so every one of them is saved.
    await first.sb.admin.advanceJob(600011, 'Cancelled');
    await stop(first.sb);

    const second = await sandboxOn(file);
    expect((await second.us.get('/Jobs/600011')).body.jobStatus).toBe('Cancelled');
    const numbers = await Promise.all(
      ['us-demo', 'us-other', 'nz-demo', 'uk-demo'].map(async (name) => {
        const listed = await new Caller(second.sb, name).get('/Jobs/active?includeClosedJobs=true');
        return listed.body.items.map((j: { jobNumber: number }) => j.jobNumber) as number[];
      }),
    );
    // Three each, the cancelled one not listed; no number is two customers'.
    const listed = numbers.flat();
    expect(listed).toHaveLength(11);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('shares its state with another sandbox on the same store, at the same time', async () => {
    const file = join(await tempDirPerTest(), 'sandbox', 'state.json');
    const a = await sandboxOn(file);
    const b = await sandboxOn(file);
    const posts = Array.from({ length: 10 }, (_, i) =>
      (i % 2 ? a : b).us.post('/Jobs', usJob({ orderNumber: `PO-S${i}` })),
    );
    const numbers = (await Promise.all(posts)).map((r) => r.body.jobNumber as number);
    expect(new Set(numbers).size).toBe(10);
    // Each sees the other's jobs.
    for (const n of numbers) {
      expect((await a.us.get(`/Jobs/${n}`)).status).toBe(200);
      expect((await b.us.get(`/Jobs/${n}`)).status).toBe(200);
    }
  });

  it('waits for the lock of another process, then names the lock file when it gives up', async () => {
    const dir = await tempDirPerTest();
    const file = join(dir, 'sandbox', 'state.json');
    await mkdir(join(dir, 'sandbox'));
    const store = new SandboxStateFile(file, { staleMs: 10_000, waitMs: 300 });
    const locked = `the sandbox state ${file} is locked by another htorder process (lock ${file}.lock`;
    // Held by another holder, then by an older htorder (proper-lockfile's lock: a fresh folder).
    const holder = new SandboxStateFile(file, { staleMs: 10_000 });
    await holder.withLock(async () => {
      await expect(store.withLock(async () => 'never')).rejects.toThrow(locked);
    });
    await mkdir(`${file}.lock`);
    await expect(store.withLock(async () => 'never')).rejects.toThrow(locked);
    await rmdir(`${file}.lock`);
    expect(await store.withLock(async () => 'now')).toBe('now');
  });

  it('a state saved with another seed is refused, naming the field', async () => {
    const file = join(await tempDirPerTest(), 'sandbox', 'state.json');
    const { us, sb } = await sandboxOn(file);
    await us.post('/Jobs', usJob());
    await stop(sb);
    await expect(start({ seed: 2, state: new SandboxStateFile(file, { staleMs: 10_000 }) })).rejects.toThrow(
      '$.seed: expected 2, the seed of this sandbox (it holds 1)',
    );
  });

  it('a state that does not fit its schema or the sandbox is refused, naming the first bad field', async () => {
    // A state saved through an in-memory store, then restored changed in one place at a time.
    let saved: SandboxSnapshot | undefined;
    const store = (state: unknown): SandboxStateStore => ({
      readIfChanged: async () => (state === undefined ? { kind: 'none' } : { kind: 'saved', state }),
      withLock: (fn) => fn(),
      write: async (s) => {
        saved = s;
      },
    });
    const first = await start({ state: store(undefined) });
    open.push(first);
    const posted = await new Caller(first, 'us-demo').post('/Jobs', usJob({ items: [dtfLine()] }));
    expect(posted.status, posted.text).toBe(201);
    await stop(first);
    const good = structuredClone(saved) as any;
    expect(good.customers[0].filedAssets).toHaveLength(1);

    const refused: [string, (s: any) => void, string][] = [
      ['a wrong type', (s) => (s.customers[0].jobs[3].status = 5), '$.customers[0].jobs[3].status: must be string'],
      [
        'a missing field',
        (s) => delete s.customers[0].jobs[3].lines[0].quantity,
        "$.customers[0].jobs[3].lines[0].quantity: must have required property 'quantity'",
      ],
      ['a bad day', (s) => (s.customers[0].jobs[3].dueDay = 'soon'), '$.customers[0].jobs[3].dueDay: must match'],
      ['an unsafe integer', (s) => (s.nextJobNumber = 2 ** 60), '$.nextJobNumber: must be <= 9007199254740991'],
      ['a header that is no string', (s) => (s.created[0].headers['7'] = 7), '$.created[0].headers.7: must be string'],
      ['an unknown customer', (s) => (s.customers[0].customerId = 9), '$.customers[0].customerId: expected a customer'],
      [
        'a customer twice',
        (s) => s.customers.push({ ...s.customers[0], jobs: [] }),
        '$.customers[1].customerId: expected each customer once',
      ],
      [
        'an asset counter behind the generated assets',
        (s) => (s.customers[0].nextAssetNumber = 10400),
        '$.customers[0].nextAssetNumber: expected an integer >= 10401',
      ],
      [
        'a filed asset at the counter',
        (s) => (s.customers[0].nextAssetNumber = 10401),
        '$.customers[0].filedAssets[0].assetTag: expected a new tag of this customer below nextAssetNumber (10401)',
      ],
      [
        'a location of another region',
        (s) => (s.customers[0].jobs[3].location = 'AKL'),
        '$.customers[0].jobs[3].location: expected a location of region us',
      ],
      [
        'a job of another customer',
        (s) => (s.customers[0].jobs[3].customerId = 1002),
        '$.customers[0].jobs[3].customerId: expected 1001',
      ],
      [
        'a record of another customer',
        (s) => (s.created[0].customerId = 1002),
        `$.created[0].customerId: expected 1001, the customer of job ${posted.body.jobNumber}`,
      ],
      [
        'a record of no job',
        (s) => (s.created[0].jobNumber = 700099),
        '$.created[0].jobNumber: expected the number of a job in customers[].jobs',
      ],
    ];
    for (const [what, change, message] of refused) {
      const state = structuredClone(good);
      change(state);
      await expect(start({ state: store(state) }), what).rejects.toThrow(message);
    }

    // Properties the schema does not name are dropped, never served.
    const extra = structuredClone(good);
    extra.customers[0].jobs[3].lines[0].planted = 'x';
    extra.customers[0].jobs[3].planted = 'x';
    const again = await start({ state: store(extra) });
    open.push(again);
    const job = await new Caller(again, 'us-demo').get(`/Jobs/${posted.body.jobNumber}`);
    expect(job.status).toBe(200);
    expect(job.text).not.toContain('planted');
  });
});
