import { setFlagsFromString } from 'node:v8';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extend } from '../../src/core/extend.js';
import { readWindowed } from '../../src/manifest/csv/windowed-read.js';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import type { Diagnostic, JobList, Manifest, ManifestJob } from '../../src/manifest/model.js';
import { checkedJobs, dueOf, type JobState, keptResolution, parkedJob } from '../../src/pipeline/job-state.js';
import { jobHash } from '../../src/pipeline/job-hash.js';
import { JobTable, type Parking } from '../../src/pipeline/job-table.js';
import { requestHash, requestOf } from '../../src/pipeline/saved-plan.js';
import { keepResolution } from '../../src/pipeline/stages/resolve.js';
import type { ResolvedJob } from '../../src/resolve/resolve-job.js';
import { tempFiles } from '../support/temp-files.js';

const files = tempFiles('htorder-job-table-');

/** A job state's keys, in their order (a parked one adds `resolved`). */
const STATE_KEYS = ['index', 'orderNumber', 'hash', 'outcome', 'diagnostics', 'unavailable'];

setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const hasFastProperties = new Function('a', 'return %HasFastProperties(a)') as (a: object) => boolean;

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const address = fc.record(
  { deliveryMethod: text, contactName: text, city: text, postalCode: text },
  { requiredKeys: ['deliveryMethod'] },
);
const item = fc.oneof(
  fc.record({ itemType: fc.constant('Asset'), code: text, quantity: fc.integer({ min: 1, max: 10_000 }) }),
  fc.record({
    itemType: fc.constant('Stock'),
    code: text,
    variantCode: text,
    sizeQuantities: fc.dictionary(text, fc.integer({ min: 0, max: 99 }), { maxKeys: 4 }),
  }),
);
const manifestJob = fc.record(
  {
    orderNumber: text,
    description: text,
    promocode: text,
    dateDue: text,
    deliveryAddress: address,
    items: fc.array(item, { minLength: 1, maxLength: 5 }),
  },
  { requiredKeys: ['orderNumber', 'deliveryAddress', 'items'] },
) as fc.Arbitrary<ManifestJob>;

const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
const hex32 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));
const parking: fc.Arbitrary<Parking> = fc.record(
  {
    request: hex64,
    content: hex32,
    estimate: fc.record(
      { total: fc.oneof(fc.double(), fc.constant(-0), fc.constant(0)), currency: fc.constantFrom('USD', 'CAD', 'EUR') },
      { requiredKeys: [] },
    ),
    dateDue: fc.oneof(fc.constant(null), fc.constantFrom('2026-03-20', '2026-04-01'), text),
  },
  { requiredKeys: ['request', 'content', 'estimate'] },
);

/** The keys an object holds a value in (the others are getters). */
const fieldsOf = (o: object): string[] =>
  Object.getOwnPropertyNames(o).filter((k) => 'value' in (Object.getOwnPropertyDescriptor(o, k) ?? {}));

const manifestOf = (jobs: ManifestJob[]): Manifest => ({ file: 'm.csv', jobs }) as unknown as Manifest;

/** A ready state of check's job `index`, with a resolution of its own. */
function ready(state: JobState, resolved: ResolvedJob, diagnostics: readonly Diagnostic[] = []): JobState {
  return extend(state, { outcome: 'ready' as const, resolved, diagnostics });
}

function resolution(index: number, orderNumber: string, total: number | undefined, due?: string): ResolvedJob {
  return {
    orderNumber,
    jobIndex: index,
    candidate: {
      orderNumber,
      deliveryAddress: { city: 'Austin' },
      items: [{ quantity: index + 1 }],
      ...(due === undefined ? {} : { dateDue: due }),
    },
    diagnostics: [],
    estimate: { lines: [], total, complete: true, currency: 'USD' },
    processCodes: [],
  } as unknown as ResolvedJob;
}

describe("an input's JobTable", () => {
  it("names a windowed CSV's jobs from its index, reading none of them, as the whole read names them", async () => {
    const numbers = ['SO-1', 'Café', '', 'SO-1', ' SO-3 ', 'Ω-9', '', 'SO-4'];
    const rows = numbers.map((n, r) => `${n},A${r},${r + 1},UPSGND`);
    const file = await files.write('orders.csv', `orderNumber,code,quantity,deliveryMethod\n${rows.join('\n')}\n`);
    const read = await readWindowed(file, undefined, 2);
    if (read === undefined) throw new Error('not read windowed');
    try {
      let reads = 0;
      const view = read.manifest.jobs;
      const jobs: JobList = {
        length: view.length,
        orderNumbers: view.orderNumbers,
        at: (j) => {
          reads++;
          return view.at(j);
        },
        [Symbol.iterator]: () => view[Symbol.iterator](),
      };
      const states = checkedJobs({ ...read.manifest, jobs }, []);
      expect(reads).toBe(0);
      const whole = (await loadManifest(file)).manifest;
      if (whole === undefined) throw new Error('no manifest');
      const plain = checkedJobs(whole, []);
      expect(states.map((s) => s.orderNumber)).toEqual(plain.map((s) => s.orderNumber));
      expect(states.map((s) => s.orderNumber)).toEqual(['SO-1', 'Café', undefined, 'SO-3', 'Ω-9', undefined, 'SO-4']);
    } finally {
      read.close();
    }
  });

  it("reads back each job's fingerprint as jobHash's very text, first asked and from the arena", () => {
    fc.assert(
      fc.property(fc.array(manifestJob, { minLength: 1, maxLength: 8 }), (jobs) => {
        const states = checkedJobs(manifestOf(jobs), []);
        jobs.forEach((job, i) => {
          const state = states[i] as JobState;
          expect(state.hash).toBe(jobHash(job));
          expect(state.hash).toBe(jobHash(job));
          expect(extend(state, { outcome: 'ready' }).hash).toBe(jobHash(job));
        });
      }),
      { numRuns: 60 },
    );
  });

  it('reads back what a job parked: the same request text, total, currency and due date', () => {
    fc.assert(
      fc.property(fc.array(parking, { minLength: 1, maxLength: 20 }), (kept) => {
        const table = new JobTable(kept.length, () => 'a'.repeat(64));
        kept.forEach((k, i) => {
          expect(table.park(i, k, [])).toBe(true);
        });
        kept.forEach((k, i) => {
          const back = table.parked(i);
          expect(back.request).toBe(k.request);
          expect(back.estimate.total).toBe(k.estimate.total);
          expect(back.estimate.currency).toBe(k.estimate.currency);
          expect(back.dateDue).toBe(k.dateDue);
          expect('dateDue' in back).toBe('dateDue' in k);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('makes a parked state that reads as the plain kept state would, in one field of one hidden class', () => {
    const jobs = Array.from({ length: 300 }, (_, i) => ({
      orderNumber: `PO-${i}`,
      deliveryAddress: { city: `c${i}` },
      items: [],
    })) as unknown as ManifestJob[];
    const manifest = manifestOf(jobs);
    const states = checkedJobs(manifest, []);
    const warning: Diagnostic = { severity: 'warning', code: 'w', message: 'm', field: 'jobs[3]' };
    const parked = states.map((state, i) => {
      const resolved = resolution(
        i,
        state.orderNumber,
        i % 7 === 0 ? undefined : i * 1.25,
        i % 2 ? '2026-03-20' : undefined,
      );
      const whole = ready(state, resolved, i === 3 ? [warning] : []);
      const plain = keepResolution(whole);
      const kept = keepResolution(whole, manifest);
      expect(Object.keys(kept)).toEqual([...STATE_KEYS, 'resolved']);
      expect({ ...kept }).toEqual({ ...plain, hash: jobHash(jobs[i] as ManifestJob) });
      expect(requestOf(kept.resolved as ResolvedJob)).toBe(requestHash(resolved));
      expect(kept.resolved && dueOf(kept.resolved)).toBe(resolved.candidate.dateDue);
      return kept;
    });
    expect(parked[3]?.diagnostics).toEqual([warning]);
    expect(parked.slice(100).every((p, k, all) => k === 0 || haveSameMap(all[k - 1] as object, p))).toBe(true);
    expect(parked.every((p) => hasFastProperties(p))).toBe(true);
    expect(fieldsOf(parked[9] as object)).toEqual(['index']);
  });

  it("keeps every input's states out of dictionary mode, the second input's as the first's", () => {
    const inputs = [0, 1, 2].map((n) =>
      manifestOf(
        Array.from({ length: 20 }, (_, i) => ({ orderNumber: `PO-${n}-${i}`, items: [] })) as unknown as ManifestJob[],
      ),
    );
    const refusing: Diagnostic = { severity: 'error', code: 'e', message: 'm', field: 'jobs[3].items' };
    for (const manifest of inputs) {
      const states = checkedJobs(manifest, [refusing]);
      expect(states.every((state) => hasFastProperties(state))).toBe(true);
      expect(states.map((state) => state.outcome)).toEqual(states.map((_, i) => (i === 3 ? 'refused' : 'checked')));
      expect(states.every((state) => state.diagnostics.length === 0 && !state.unavailable)).toBe(true);
      expect(states.every((state, i) => state.index === i && fieldsOf(state).join() === 'index')).toBe(true);
      expect(Object.keys(states[3] as object)).toEqual(STATE_KEYS);
      states.splice(3, 1);
      const parked = states.map((state, i) =>
        keepResolution(ready(state, resolution(i, state.orderNumber, 1, '2026-03-20')), manifest),
      );
      expect(parked.every((state) => hasFastProperties(state) && 'kept' in (state.resolved ?? {}))).toBe(true);
    }
  });

  it('keeps a job as it is where it does not fit: not ready, approved, or one currency too many', () => {
    const jobs = Array.from({ length: 40 }, (_, i) => ({
      orderNumber: `PO-${i}`,
      items: [],
    })) as unknown as ManifestJob[];
    const manifest = manifestOf(jobs);
    const states = checkedJobs(manifest, []);
    const kept = (i: number, currency: string) =>
      parkedJob(ready(states[i] as JobState, resolution(i, `PO-${i}`, 1)), manifest, {
        request: 'b'.repeat(64),
        content: 'd'.repeat(32),
        estimate: { total: 1, currency },
      });
    for (let i = 0; i < 31; i++) expect(kept(i, `C${i}`)).toBeDefined();
    expect(kept(31, 'C31')).toBeUndefined();
    expect(kept(32, 'C3')).toBeDefined();
    // Its order number is read from the table: a state whose own differs is kept as it is.
    const renamed = { ...ready(states[34] as JobState, resolution(34, 'PO-34', 1)), orderNumber: 'PO-X' } as JobState;
    expect(
      parkedJob(renamed, manifest, { request: 'b'.repeat(64), content: 'd'.repeat(32), estimate: {} }),
    ).toBeUndefined();
    const approved = extend(ready(states[33] as JobState, resolution(33, 'PO-33', 1)), { approval: {} as never });
    expect(
      parkedJob(approved, manifest, { request: 'b'.repeat(64), content: 'd'.repeat(32), estimate: {} }),
    ).toBeUndefined();
    expect(
      parkedJob(states[34] as JobState, manifest, { request: 'b'.repeat(64), content: 'd'.repeat(32), estimate: {} }),
    ).toBeUndefined();
    expect(
      keptResolution('PO-1', 1, { request: 'c'.repeat(64), content: 'e'.repeat(32), estimate: { total: 2 } }),
    ).toEqual({
      kept: true,
      orderNumber: 'PO-1',
      jobIndex: 1,
      request: 'c'.repeat(64),
      content: 'e'.repeat(32),
      estimate: { total: 2 },
    });
  });
});
