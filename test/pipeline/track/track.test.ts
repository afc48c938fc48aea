import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import { runTrack } from '../../../src/cli/commands/track.js';
import { sandboxConfig } from '../../../src/core/config/sandbox-config.js';
import type { ResultReport } from '../../../src/report/model.js';
import { collectTargets } from '../../../src/pipeline/track/targets.js';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';
import { formatChanges } from '../../../src/pipeline/track/format.js';
import { watchTracking, type TrackResult } from '../../../src/pipeline/track/track.js';
import { PipelineHarness } from '../../support/pipeline-harness.js';
import { ITEMS, manifest } from '../../support/yaml-manifests.js';
import { sink } from '../../support/sink.js';

const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ??
  addFormatsImport) as unknown as (a: Ajv2020) => void;
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validateReport = ajv.compile(
  JSON.parse(await readFile(new URL('../../../schemas/report.schema.json', import.meta.url), 'utf8')),
);

let h: PipelineHarness;
beforeAll(async () => {
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

const HOUR = 3_600_000;

/** `htorder track …` in-process against the harness's sandbox. */
async function track(
  paths: string[],
  opts: Record<string, unknown> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runTrack(paths, opts, { stdout: out.stream, stderr: err.stream, env: h.env(), cwd: h.workDir });
  return { code, stdout: out.text(), stderr: err.text() };
}

async function submitted(n: number, prefix = 'PO'): Promise<{ file: string; jobNumbers: number[] }> {
  const file = await h.write(
    `${prefix}.yaml`,
    manifest(Array.from({ length: n }, (_, i) => ({ orderNumber: `${prefix}-${i + 1}`, items: ITEMS.reorder }))),
  );
  const r = await h.cli('run', [file]);
  expect(r.code, r.stderr).toBe(0);
  return { file, jobNumbers: (await h.report(file)).jobs.map((j) => j.jobNumber!) };
}

/** The account key the runs recorded their orders under (the ledger vouches for reports' jobs by it). */
async function ledgerAccount(): Promise<string> {
  for await (const entry of new FolderLedger(h.stateDir).entries()) return entry.account;
  throw new Error('the ledger has no entries');
}

async function calls(): Promise<Record<string, number>> {
  return h.sandbox.admin.calls();
}

async function report(file: string): Promise<ResultReport> {
  const r = JSON.parse(await readFile(`${file}.result.json`, 'utf8')) as ResultReport;
  expect(validateReport(r), JSON.stringify(validateReport.errors)).toBe(true);
  return r;
}

describe('htorder track', () => {
  it('follows jobs through their lifecycle with one /Jobs/active call, reading a job only when it changed', async () => {
    const {
      file,
      jobNumbers: [a, b],
    } = await submitted(2);
    await h.sandbox.admin.resetCalls();

    const first = await track([`${file}.result.json`]);
    expect(first.code, first.stderr).toBe(0);
    expect(await calls()).toMatchObject({ 'GET /Jobs/active': 1 });
    expect((await calls())['GET /Jobs/{jobNumber}']).toBeUndefined();
    let r = await report(file);
    expect(r.jobs[0]!.tracking).toMatchObject({
      status: 'Received',
      inActiveList: true,
      dateOut: null,
      tracking: [],
      canEdit: true,
      isCancelable: null,
      problem: null,
    });
    expect(first.stderr).toMatch(new RegExp(`${a}\\s+PO-1\\s+Received`));

    // Time passes: Received --1h--> Scheduled --23h--> In Production.
    await h.sandbox.admin.advanceClock(25 * HOUR);
    await h.sandbox.admin.resetCalls();
    expect((await track([file])).code).toBe(0);
    r = await report(file);
    expect(r.jobs.map((j) => j.tracking!.status)).toEqual(['In Production', 'In Production']);
    // Status changed: the flags that go with it were read again, per job.
    expect(await calls()).toMatchObject({ 'GET /Jobs/active': 1, 'GET /Jobs/{jobNumber}': 2 });
    expect(r.jobs[0]!.tracking).toMatchObject({ jobStatus: 'In Production', isCancelable: false, canEdit: true });

    // Job a is dispatched: dates, tracking, invoice.
    await h.sandbox.admin.advanceJob(a!, 'Dispatched');
    await h.sandbox.admin.resetCalls();
    const shipped = await track([file], { json: true });
    expect(shipped.code).toBe(0);
    expect(await calls()).toMatchObject({ 'GET /Jobs/active': 1, 'GET /Jobs/{jobNumber}': 1 });
    r = await report(file);
    const t = r.jobs[0]!.tracking!;
    expect(t).toMatchObject({ status: 'Dispatched', canEdit: false, isCancelable: false, invoiceNumber: `INV-${a}` });
    expect(t.dateOut).not.toBeNull();
    expect(t.shippedDateStatus).toMatch(/^Shipped (early|on time|late)$/);
    expect(t.tracking[0]).toEqual({
      trackingNumber: `UPSGND${a}1`,
      trackingLink: `https://track.sandbox.invalid/UPSGND/${a}1`,
    });
    // The signed invoice link is stored whole in the report, and shown nowhere with its signature.
    expect(t.invoiceFile!.uri).toContain('sig=sandbox');
    expect(shipped.stdout + shipped.stderr).not.toContain('sig=sandbox');
    const json = JSON.parse(shipped.stdout) as {
      jobs: { jobNumber: number; tracking: { invoiceFile: { uri: string } | null } }[];
    };
    expect(json.jobs.find((j) => j.jobNumber === a)!.tracking.invoiceFile!.uri).toBe(
      `https://cdn.sandbox.invalid/invoices/INV-${a}.pdf?[redacted]`,
    );
    expect(r.jobs[1]!.tracking!.status).toBe('In Production');

    // Nothing changed and the invoice link is still valid: no job is read.
    await h.sandbox.admin.resetCalls();
    const table = await track([file]);
    expect((await calls())['GET /Jobs/{jobNumber}']).toBeUndefined();
    expect(table.stderr).toMatch(new RegExp(`${a}\\s+PO-1\\s+Dispatched.*UPSGND${a}1\\s+INV-${a}`));
    expect(table.stderr).toMatch(new RegExp(`${b}\\s+PO-2\\s+In Production`));
  });

  it('pages /Jobs/active 100 at a time: 150 jobs cost 2 calls, not one per job', async () => {
    const { file, jobNumbers } = await submitted(150);
    expect(jobNumbers).toHaveLength(150);
    await h.sandbox.admin.resetCalls();
    expect((await track([file])).code).toBe(0);
    const c = await calls();
    expect(c['GET /Jobs/active']).toBe(2);
    expect(c['GET /Jobs/{jobNumber}']).toBeUndefined();
    expect((await report(file)).jobs.every((j) => j.tracking?.status === 'Received')).toBe(true);
  });

  it('detects a cancelled job through GET /Jobs/{n}, and then leaves it alone', async () => {
    const {
      file,
      jobNumbers: [a],
    } = await submitted(1);
    const client = createApiClient(sandboxConfig(h.sandbox, 'us-demo', { stateDir: h.stateDir }));
    await client.jobs.cancel(a!);
    await client.close();
    await h.sandbox.admin.resetCalls();
    expect((await track([file])).code).toBe(0);
    expect(await calls()).toMatchObject({ 'GET /Jobs/active': 1, 'GET /Jobs/{jobNumber}': 1 });
    expect((await report(file)).jobs[0]!.tracking).toMatchObject({
      status: 'Cancelled',
      inActiveList: false,
      isCancelable: false,
      canEdit: false,
    });
    // Gone from the list and locked for good: final, not read again.
    await h.sandbox.admin.resetCalls();
    expect((await track([file])).code).toBe(0);
    expect((await calls())['GET /Jobs/{jobNumber}']).toBeUndefined();
    expect((await report(file)).jobs[0]!.tracking!.status).toBe('Cancelled');
  });

  it('shows a status the lookup has never heard of, as it is', async () => {
    const {
      file,
      jobNumbers: [a],
    } = await submitted(1);
    expect((await track([file])).code).toBe(0);
    await h.sandbox.admin.advanceJob(a!, 'Awaiting Carrier Pickup', { unlisted: true });
    const r = await track([file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Awaiting Carrier Pickup');
    expect((await report(file)).jobs[0]!.tracking).toMatchObject({
      status: 'Awaiting Carrier Pickup',
      jobStatus: 'Awaiting Carrier Pickup',
    });
  });

  it('closed jobs: read once when they leave the list, or followed in the list with --include-closed', async () => {
    const {
      file,
      jobNumbers: [a],
    } = await submitted(1);
    await h.sandbox.admin.advanceJob(a!, 'Dispatched');
    await h.sandbox.admin.advanceJob(a!, 'Closed');
    await h.sandbox.admin.resetCalls();
    expect((await track([file], { includeClosed: true })).code).toBe(0);
    expect((await report(file)).jobs[0]!.tracking).toMatchObject({
      status: 'Closed',
      inActiveList: true,
      invoiceNumber: `INV-${a}`,
    });
    await h.sandbox.admin.resetCalls();
    expect((await track([file])).code).toBe(0);
    expect(await calls()).toMatchObject({ 'GET /Jobs/active': 1, 'GET /Jobs/{jobNumber}': 1 });
    expect((await report(file)).jobs[0]!.tracking).toMatchObject({ status: 'Closed', inActiveList: false });
  });

  it('without arguments follows the ledger, writing into the reports of the inputs that submitted the jobs', async () => {
    const { file: f1 } = await submitted(1, 'A');
    const { file: f2 } = await submitted(2, 'B');
    const r = await track([], { json: true });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { jobs: unknown[] }).jobs).toHaveLength(3);
    expect((await report(f1)).jobs[0]!.tracking!.status).toBe('Received');
    expect((await report(f2)).jobs.map((j) => j.tracking!.status)).toEqual(['Received', 'Received']);
    // A folder of inputs: every report in it.
    const account = await ledgerAccount();
    const targets = await collectTargets([h.workDir], { stateDir: h.stateDir, account: async () => account });
    expect(targets.targets.map((t) => t.orderNumber).sort()).toEqual(['A-1', 'B-1', 'B-2']);
  });

  it('a job that is not on this account is reported (exit 1), the others are still tracked', async () => {
    const { file } = await submitted(2);
    const path = `${file}.result.json`;
    const r = JSON.parse(await readFile(path, 'utf8')) as ResultReport;
    r.jobs[1]!.jobNumber = 999_999;
    await writeFile(path, JSON.stringify(r));
    // The ledger says so too (a job gone from the account): followed, and found missing.
    const ledger = new FolderLedger(h.stateDir);
    const key = { account: await ledgerAccount(), orderNumber: r.jobs[1]!.orderNumber! };
    await ledger.write({ ...(await ledger.read(key))!, jobNumber: 999_999 }, { guard: null });
    const out = await track([path]);
    expect(out.code).toBe(1);
    const after = await report(file);
    expect(after.jobs[0]!.tracking!.status).toBe('Received');
    expect(after.jobs[1]!.tracking!.problem).toBe('job 999999 was not found on this account');
  });

  it('usage: nothing to track is exit 2, an interval under a minute is refused', async () => {
    expect((await track([join(h.workDir, 'nope.yaml')])).code).toBe(2);
    await expect(track([], { watch: true, interval: '0.5' })).rejects.toThrow(/--interval/);
  });

  it('--watch repeats and reports only what changed, until stopped', async () => {
    const {
      file,
      jobNumbers: [a, b],
    } = await submitted(2);
    const client = createApiClient(sandboxConfig(h.sandbox, 'us-demo', { stateDir: h.stateDir }));
    const seen: TrackResult[] = [];
    const stop = new AbortController();
    const account = await ledgerAccount();
    await watchTracking(client, () => collectTargets([file], { stateDir: h.stateDir, account: async () => account }), {
      includeClosed: false,
      details: false,
      concurrency: 4,
      intervalMs: 10,
      // The calendar clock of a rehearsed later night: each check is dated by it, not by the host's.
      now: () => new Date(Date.now() + 2 * 86_400_000),
      signal: stop.signal,
      onCheck: async (result) => {
        seen.push(result);
        if (seen.length === 1) await h.sandbox.admin.advanceJob(a!, 'Some New Status', { unlisted: true });
        if (seen.length === 3) stop.abort();
      },
    });
    await client.close();
    expect(seen).toHaveLength(3);
    const changed = (r: TrackResult) => r.jobs.filter((j) => j.changes.length > 0).map((j) => [j.jobNumber, j.changes]);
    expect(changed(seen[0]!)).toEqual([
      [a, ['first check']],
      [b, ['first check']],
    ]);
    expect(changed(seen[1]!)).toEqual([[a, ['status Received → Some New Status']]]);
    expect(changed(seen[2]!)).toEqual([]);
    for (const r of seen) {
      expect(Date.parse(r.checkedAt) - Date.now()).toBeGreaterThan(86_400_000);
      for (const j of r.jobs) expect(j.tracking.checkedAt).toBe(r.checkedAt);
    }
    const printed = formatChanges(seen[1]!.jobs, new Date(seen[1]!.checkedAt));
    expect(printed.startsWith(`${seen[1]!.checkedAt} ${a} `)).toBe(true);
  });
});

describe('sandbox: unlisted statuses', () => {
  it('enters a status name the lookup does not have only when asked to, and the job stays readable', async () => {
    const {
      jobNumbers: [a],
    } = await submitted(1);
    await expect(h.sandbox.admin.advanceJob(a!, 'Teleported')).rejects.toThrow(/400/);
    expect(await h.sandbox.admin.advanceJob(a!, 'Teleported', { unlisted: true })).toEqual({
      jobNumber: a,
      jobStatus: 'Teleported',
    });
    const client = createApiClient(sandboxConfig(h.sandbox, 'us-demo', { stateDir: h.stateDir }));
    expect(await client.jobs.get(a!)).toMatchObject({
      jobStatus: 'Teleported',
      isCancelable: false,
      permissions: { canEdit: true },
    });
    const active = await client.jobs.active({ pageSize: 100 });
    expect(active.items.find((j) => j.jobNumber === a)!.masterJobStatus).toBe('Teleported');
    await client.close();
  });
});
