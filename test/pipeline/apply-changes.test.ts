import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ApiError } from '../../src/api/errors.js';
import type { JobDto } from '../../src/api/types.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';
import type { ManifestJob } from '../../src/manifest/model.js';
import { applyChanges, declarativeChanges, diffChanges } from '../../src/pipeline/apply-changes.js';
import { jobHash } from '../../src/pipeline/job-hash.js';
import { silentLogger } from '../../src/core/log/logger.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ADDRESS, ITEMS } from '../support/yaml-manifests.js';

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** One job `PO-1` with optional job-level lines (`description: x`, `cancel: true` …). */
function order(extra: string[] = [], items = ITEMS.reorder): string {
  return `version: 1\njobs:\n  - orderNumber: PO-1\n${extra.map((l) => `    ${l}\n`).join('')}${ADDRESS}    items:\n${items}`;
}

async function calls(key: string): Promise<number> {
  return (await h.sandbox.admin.calls())[key] ?? 0;
}

function client() {
  return createApiClient(sandboxConfig(h.sandbox, 'us-demo', { stateDir: h.stateDir }));
}

async function jobOf(n: number): Promise<JobDto> {
  const c = client();
  try {
    return await c.jobs.get(n);
  } finally {
    await c.close();
  }
}

async function submit(extra: string[] = []): Promise<{ file: string; jobNumber: number }> {
  const file = await h.write('order.yaml', order(extra));
  const r = await h.cli('run', [file]);
  expect(r.code, r.stderr).toBe(0);
  return { file, jobNumber: (await h.report(file)).jobs[0]!.jobNumber! };
}

const codes = (list: readonly { code: string }[]): string[] => list.map((e) => e.code);

describe('jobHash and diffChanges (pure)', () => {
  const base: ManifestJob = {
    orderNumber: 'PO-1',
    deliveryAddress: { deliveryMethod: 'UPS Ground' },
    items: [{ itemType: 'Asset', code: 'A10001', quantity: 5 }],
  };

  it('leaves the patchable fields out of the fingerprint, but not the items or address', () => {
    expect(jobHash({ ...base, description: 'x', orderComment: 'y', mustDate: true, dateDue: '2030-01-01' })).toBe(
      jobHash(base),
    );
    expect(jobHash({ ...base, deliveryAddress: { deliveryMethod: 'FDXON' } })).not.toBe(jobHash(base));
  });

  it('changes only fields that differ from the baseline and from the job now; dates compare by day', () => {
    const current = {
      description: 'old',
      comments: null,
      mustDate: false,
      dateDue: '2030-01-02T00:00:00',
    } as unknown as JobDto;
    const job: ManifestJob = {
      ...base,
      description: 'new',
      orderComment: 'hi',
      dateDue: '2030-01-02',
      mustDate: false,
    };
    expect(diffChanges(job, undefined, current).map((c) => [c.apiField, c.from, c.to])).toEqual([
      ['description', 'old', 'new'],
      ['comments', null, 'hi'],
    ]);
    // Same as when it was last sent: the user did not edit it (a dashboard change stays).
    expect(diffChanges(job, { description: 'new', orderComment: 'hi' }, current)).toEqual([]);
  });
});

describe('declarative changes through htorder run and plan', () => {
  it('patches an edited description and orderComment once, and plan shows the diff first without sending', async () => {
    const { file, jobNumber } = await submit(['description: Spring kit']);
    await h.write('order.yaml', order(['description: Spring kit v2', 'orderComment: rush please']));

    const plan = await h.cli('plan', [file]);
    expect(plan.code).toBe(0);
    expect(plan.stderr).toContain('run would change description from "Spring kit" to "Spring kit v2"');
    const planned = (await h.report(file)).jobs[0]!;
    expect(codes(planned.warnings)).toEqual(['changes.planned', 'changes.planned']);
    expect(planned.warnings[0]!.source).toMatchObject({ line: 4 });
    expect(await calls('PATCH /Jobs/{jobNumber}')).toBe(0);
    expect((await jobOf(jobNumber)).description).toBe('Spring kit');

    const run = await h.cli('run', [file]);
    expect(run.code, run.stderr).toBe(0);
    const after = await jobOf(jobNumber);
    expect(after).toMatchObject({ description: 'Spring kit v2', comments: 'rush please' });
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('already-submitted');
    expect(codes(job.warnings)).toEqual(['changes.applied', 'changes.applied']);
    expect(await calls('PATCH /Jobs/{jobNumber}')).toBe(1);
    expect(await h.sandbox.admin.jobs()).toHaveLength(1); // changed in place, never created again

    // Re-run: the ledger's baseline says nothing changed: not even the job is read.
    await h.sandbox.admin.resetCalls();
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await calls('PATCH /Jobs/{jobNumber}')).toBe(0);
    expect(await calls('GET /Jobs/{jobNumber}')).toBe(0);
  });

  it('does not undo a change made in the dashboard when the manifest is unchanged', async () => {
    const { file, jobNumber } = await submit(['description: Spring kit']);
    const c = client();
    await c.jobs.patch(jobNumber, { description: 'Changed by a person' });
    await c.close();
    await h.sandbox.admin.resetCalls();
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await calls('PATCH /Jobs/{jobNumber}')).toBe(0);
    expect((await jobOf(jobNumber)).description).toBe('Changed by a person');
  });

  it('a ledger that finds the order on the account takes the manifest as the baseline: a moved due date and a dashboard edit stay, a later edit is sent', async () => {
    // A due date earlier than possible is moved by the API at the create (a warning, not a refusal).
    const { file, jobNumber } = await submit(['description: Spring kit', 'dateDue: 2001-01-01']);
    expect((await jobOf(jobNumber)).dateDue?.startsWith('2001-01-01')).toBe(false);
    const c = client();
    await c.jobs.patch(jobNumber, { description: 'Changed by a person' });
    await c.close();
    // Another host's ledger (or a state dir moved to a new machine): it never sent this order.
    const env = { HTORDER_STATE_DIR: await mkdtemp(join(tmpdir(), 'htorder-other-ledger-')) };
    for (const [night, offset] of [
      [1, '0'],
      [2, '1d'],
    ] as const) {
      await h.sandbox.admin.resetCalls();
      const r = await h.cli('run', [file], { env: { ...env, HTORDER_CLOCK_OFFSET: offset } });
      expect(r.code, `night ${night}: ${r.stderr}`).toBe(0);
      expect((await h.report(file)).jobs[0]).toMatchObject({ status: 'already-submitted', jobNumber, errors: [] });
      expect(await calls('PATCH /Jobs/{jobNumber}'), `night ${night}`).toBe(0);
    }
    expect((await jobOf(jobNumber)).description).toBe('Changed by a person');
    await h.write('order.yaml', order(['description: Spring kit v2', 'dateDue: 2001-01-01']));
    expect((await h.cli('run', [file], { env })).code).toBe(0);
    expect(await calls('PATCH /Jobs/{jobNumber}')).toBe(1);
    expect((await jobOf(jobNumber)).description).toBe('Spring kit v2');
  });

  it('refuses to patch a locked job, quoting lockedReason, without sending the PATCH', async () => {
    const { file, jobNumber } = await submit(['description: Spring kit']);
    await h.sandbox.admin.advanceJob(jobNumber, 'Dispatched');
    await h.write('order.yaml', order(['description: too late']));
    const run = await h.cli('run', [file]);
    expect(run.code).toBe(1);
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('already-submitted');
    expect(job.errors[0]).toMatchObject({ code: 'changes.locked', field: 'jobs[0].description' });
    expect(job.errors[0]!.message).toContain('Job is Dispatched and can no longer be edited.');
    expect(await calls('PATCH /Jobs/{jobNumber}')).toBe(0);
  });

  it('reports a due date the factory cannot meet (400) and patches a later one', async () => {
    const { file, jobNumber } = await submit([]);
    await h.write('order.yaml', order(['dateDue: 2001-01-01']));
    const refused = await h.cli('run', [file]);
    expect(refused.code).toBe(1);
    expect((await h.report(file)).jobs[0]!.errors[0]).toMatchObject({
      code: 'changes.rejected',
      field: 'jobs[0].dateDue',
    });
    await h.write('order.yaml', order(['dateDue: 2031-03-04', 'mustDate: true']));
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await jobOf(jobNumber)).toMatchObject({ dateDue: '2031-03-04T00:00:00', mustDate: true });
  });

  it('a change of items is still reported as changed-after-submit and nothing is sent, not even the description', async () => {
    const { file, jobNumber } = await submit(['description: a']);
    await h.write('order.yaml', order(['description: b'], ITEMS.stock));
    const run = await h.cli('run', [file]);
    expect(run.code).toBe(1);
    expect(codes((await h.report(file)).jobs[0]!.errors)).toEqual(['ledger.changed-after-submit']);
    expect(await calls('PATCH /Jobs/{jobNumber}')).toBe(0);
    expect((await jobOf(jobNumber)).description).toBe('a');
  });

  it('cancels a job declaratively, once; a re-run sends nothing more', async () => {
    const { file, jobNumber } = await submit([]);
    await h.write('order.yaml', order(['cancel: true']));
    const plan = await h.cli('plan', [file]);
    expect(plan.stderr).toContain(`run would cancel job ${jobNumber}`);
    expect(await calls('POST /Jobs/{jobNumber}/cancel')).toBe(0);

    const run = await h.cli('run', [file]);
    expect(run.code, run.stderr).toBe(0);
    expect((await jobOf(jobNumber)).jobStatus).toBe('Cancelled');
    expect(codes((await h.report(file)).jobs[0]!.warnings)).toEqual(['changes.cancelled']);
    expect(await calls('POST /Jobs/{jobNumber}/cancel')).toBe(1);

    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await calls('POST /Jobs/{jobNumber}/cancel')).toBe(1);
  });

  it('does not send a cancel when isCancelable is false, and gives the spec advice', async () => {
    const { file, jobNumber } = await submit([]);
    await h.sandbox.admin.advanceJob(jobNumber, 'In Production');
    await h.write('order.yaml', order(['cancel: true']));
    const plan = await h.cli('plan', [file]);
    expect(plan.stderr).toContain('cannot be cancelled now');
    const run = await h.cli('run', [file]);
    expect(run.code).toBe(1);
    const error = (await h.report(file)).jobs[0]!.errors[0]!;
    expect(error.code).toBe('changes.not-cancelable');
    expect(error.message).toContain('contact the account manager');
    expect(await calls('POST /Jobs/{jobNumber}/cancel')).toBe(0);
  });

  it('resends a cancel whose answer was lost, and reports the 409 when the job went into production meanwhile', async () => {
    const { file, jobNumber } = await submit([]);
    // An earlier run sent the cancel and crashed before the answer: the ledger says so.
    const ledger = new FolderLedger(h.stateDir);
    let entry: LedgerEntry | undefined;
    for await (const e of ledger.entries()) entry = e;
    await ledger.write({ ...entry!, cancelRequestedAt: new Date().toISOString() }, { guard: null });
    await h.sandbox.admin.advanceJob(jobNumber, 'In Production');
    await h.write('order.yaml', order(['cancel: true']));
    const run = await h.cli('run', [file]);
    expect(run.code).toBe(1);
    expect((await h.report(file)).jobs[0]!.errors[0]!.message).toMatch(
      /not cancelled \(409\).*contact the account manager/,
    );
    expect(await calls('POST /Jobs/{jobNumber}/cancel')).toBe(1);
    let after: LedgerEntry | undefined;
    for await (const e of ledger.entries()) after = e;
    expect(after!.cancelRequestedAt).toBeUndefined();
  });

  it("decides on the entry read under the lock, not the look-up's: a cancel another process sent meanwhile is not sent again", async () => {
    const { file, jobNumber } = await submit([]);
    const ledger = new FolderLedger(h.stateDir);
    let looked: LedgerEntry | undefined;
    for await (const e of ledger.entries()) looked = e;
    // This run's look-up has read the entry; then another htorder process cancels the job.
    await h.write('order.yaml', order(['cancel: true']));
    expect((await h.cli('run', [file])).code).toBe(0);
    expect(await calls('POST /Jobs/{jobNumber}/cancel')).toBe(1);
    const reads = await calls('GET /Jobs/{jobNumber}');
    const c = client();
    try {
      const out = await declarativeChanges(
        {
          mode: 'run',
          client: c,
          ledger,
          logger: silentLogger(),
          jobIndex: 0,
          sources: { locate: (f) => ({ file: f }) },
          clock: systemClock,
        },
        { orderNumber: 'PO-1', cancel: true, deliveryAddress: {}, items: [] },
        { hash: looked!.payloadHash, submitted: looked },
      );
      expect(out).toMatchObject({ state: 'none', diagnostics: [] });
    } finally {
      await c.close();
    }
    expect(await calls('POST /Jobs/{jobNumber}/cancel')).toBe(1);
    expect(await calls('GET /Jobs/{jobNumber}')).toBe(reads);
    expect((await jobOf(jobNumber)).jobStatus).toBe('Cancelled');
  });

  it('never submits a job that says cancel: true but was never submitted', async () => {
    const file = await h.write('order.yaml', order(['cancel: true']));
    const run = await h.cli('run', [file]);
    expect(run.code).toBe(1);
    const job = (await h.report(file)).jobs[0]!;
    expect(job.status).toBe('invalid');
    expect(codes(job.errors)).toEqual(['changes.cancel-unsubmitted']);
    expect(await h.sandbox.admin.jobs()).toEqual([]);
  });

  it('reports a 403 from PATCH with the lockedReason of the answer (the job locked after it was read)', async () => {
    // The sandbox cannot lock a job between a GET and a PATCH; this stands in for the API.
    const job = {
      jobNumber: 7,
      jobStatus: 'Scheduled',
      description: 'a',
      comments: null,
      mustDate: false,
      dateDue: '2030-01-01T00:00:00',
      isCancelable: true,
      permissions: { canEdit: true, lockedReason: null },
    };
    const sent: unknown[] = [];
    const api = {
      jobs: {
        get: async () => job,
        patch: async (_n: number, body: unknown) => {
          sent.push(body);
          throw new ApiError({
            kind: 'http',
            method: 'PATCH',
            route: '/Jobs/7',
            status: 403,
            mayHaveReachedServer: true,
            body: { title: 'Forbidden', status: 403, lockedReason: 'Job is being packed.' },
          });
        },
      },
    };
    const ledger = new FolderLedger(h.stateDir);
    const entry: LedgerEntry = {
      ledgerVersion: 1,
      account: 'acct',
      orderNumber: 'PO-1',
      payloadHash: 'h',
      state: 'submitted',
      attempts: 1,
      intentAt: '2030-01-01T00:00:00Z',
      jobNumber: 7,
      patchable: { description: 'a' },
    };
    await ledger.write(entry, { guard: null });
    const out = await applyChanges(
      {
        mode: 'run',
        client: api as never,
        ledger,
        logger: silentLogger(),
        jobIndex: 0,
        sources: { locate: (file) => ({ file }) },
        clock: systemClock,
      },
      { orderNumber: 'PO-1', description: 'b', deliveryAddress: {}, items: [] },
      entry,
    );
    expect(sent).toEqual([{ description: 'b' }]);
    expect(out.state).toBe('refused');
    expect(out.diagnostics[0]).toMatchObject({ severity: 'error', code: 'changes.locked' });
    expect(out.diagnostics[0]!.message).toContain('Job is being packed.');
    // Not applied: the baseline stays, so the next run tries again after reading the job.
    expect((await ledger.read({ account: 'acct', orderNumber: 'PO-1' }))!.patchable).toEqual({ description: 'a' });
  });
});
