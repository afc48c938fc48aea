import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/core/errors.js';
import { CLI, requireDist } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * `--sandbox` keeps its promise (issue 15, part 3): the in-process sandbox keeps its jobs under
 * the state dir and its ledger under `sandbox/<account>`, so the same manifest run twice is
 * `submitted`, then `already-submitted` with the same job number — in real processes, each
 * with a new sandbox on a new port, as a user runs them.
 */

const exec = promisify(execFile);

interface Job {
  orderNumber: string;
  status: string;
  jobNumber: number | null;
}
interface Outcome {
  code: number;
  stderr: string;
  jobs: Job[];
}

beforeAll(requireDist);

/** `htorder ARGS --json` in its own process, with this test's XDG_STATE_HOME. */
async function htorder(args: string[], cwd: string): Promise<Outcome> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const k of Object.keys(env)) if (k.startsWith('HTORDER_')) delete env[k];
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { cwd, env });
    return { code: 0, stderr, jobs: jobsOf(stdout) };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stderr: e.stderr, jobs: jobsOf(e.stdout) };
  }
}

function jobsOf(stdout: string): Job[] {
  if (!stdout.trim()) return [];
  const summary = JSON.parse(stdout) as { inputs: { jobs?: Job[] }[] };
  return summary.inputs
    .flatMap((i) => i.jobs ?? [])
    .map((j) => ({ orderNumber: j.orderNumber, status: j.status, jobNumber: j.jobNumber }));
}

const stateFile = (): string => join(process.env.XDG_STATE_HOME as string, 'htorder', 'sandbox', 'state.json');

async function orders(dir: string, name: string, prefix: string, n = 1): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, manifest(prefix, n));
  return file;
}

describe('run --sandbox twice', () => {
  it('submits, then answers already-submitted with the same job number; --sandbox-reset starts over', async () => {
    const dir = await tempDirPerTest();
    const file = await orders(dir, 'orders.yaml', 'PO-TWICE');

    const first = await htorder(['run', '--sandbox', '--json', file], dir);
    expect(first.code, first.stderr).toBe(ExitCode.Ok);
    expect(first.jobs).toEqual([{ orderNumber: 'PO-TWICE-1', status: 'submitted', jobNumber: expect.any(Number) }]);
    const jobNumber = first.jobs[0].jobNumber;

    const second = await htorder(['run', '--sandbox', '--json', file], dir);
    expect(second.code, second.stderr).toBe(ExitCode.Ok);
    expect(second.jobs).toEqual([{ orderNumber: 'PO-TWICE-1', status: 'already-submitted', jobNumber }]);

    // The sandbox itself still knows the job (not only the ledger): it answers GET /Jobs/{n}.
    const api = await exec(process.execPath, [CLI, 'api', 'GET', `/Jobs/${jobNumber}`, '--sandbox'], { cwd: dir });
    expect(JSON.parse(api.stdout)).toMatchObject({ jobNumber, orderNumber: 'PO-TWICE-1' });

    const reset = await htorder(['run', '--sandbox', '--sandbox-reset', '--json', file], dir);
    expect(reset.code, reset.stderr).toBe(ExitCode.Ok);
    expect(reset.stderr).toContain('--sandbox-reset');
    expect(reset.stderr).toContain(stateFile());
    expect(reset.stderr).toContain('1 of sandbox/us-demo');
    expect(reset.jobs).toHaveLength(1);
    expect(reset.jobs[0].status).toBe('submitted');
    // A new job number: numbers go on across a reset, so an old report never names a new job.
    expect(reset.jobs[0].jobNumber).toBeGreaterThan(jobNumber as number);
  }, 60_000);

  it('--sandbox-reset leaves the ledger of real accounts alone, and needs --sandbox', async () => {
    const dir = await tempDirPerTest();
    const file = await orders(dir, 'orders.yaml', 'PO-REAL');
    const ledger = join(process.env.XDG_STATE_HOME as string, 'htorder', 'ledger');
    const real = join(ledger, 'https___api.us.example.com_1001-0123456789abcdef');
    await mkdir(real, { recursive: true });
    await writeFile(join(real, 'PO-1-0123456789abcdef.json'), '{"account":"https://api.us.example.com#1001"}\n');

    const reset = await htorder(['plan', '--sandbox', '--sandbox-reset', '--json', file], dir);
    expect(reset.code, reset.stderr).toBe(ExitCode.Ok);
    expect(existsSync(join(real, 'PO-1-0123456789abcdef.json'))).toBe(true);

    const without = await htorder(['plan', '--sandbox-reset', file], dir);
    expect(without.code).toBe(ExitCode.Usage);
    expect(without.stderr).toContain('--sandbox-reset needs --sandbox');
  }, 60_000);
});

describe('a state file that cannot be used', () => {
  it.each([
    ['not JSON', '{"format": "htorder-sandbox-state", "vers', 'is not valid JSON'],
    [
      'a job number the counter would hand out again',
      JSON.stringify({
        format: 'htorder-sandbox-state',
        version: 1,
        seed: 1,
        startMs: 0,
        clockOffsetMs: 0,
        nextJobNumber: 700001,
        created: [],
        customers: [{ customerId: 1001, nextAssetNumber: 10401, filedAssets: [], jobs: [job(700005)] }],
      }),
      '$.customers[0].jobs[0].jobNumber: expected a job number below nextJobNumber (700001)',
    ],
    ['another format', '{"format": "something else"}', '$.format: expected "htorder-sandbox-state"'],
  ])(
    '%s: exit 2 naming the file and --sandbox-reset; nothing is sent; the file is kept',
    async (_what, text, why) => {
      const dir = await tempDirPerTest();
      const file = await orders(dir, 'orders.yaml', 'PO-CORRUPT');
      await mkdir(join(stateFile(), '..'), { recursive: true });
      await writeFile(stateFile(), text);

      const r = await htorder(['run', '--sandbox', '--json', file], dir);
      expect(r.code).toBe(ExitCode.Usage);
      expect(r.stderr).toContain(stateFile());
      expect(r.stderr).toContain(why);
      expect(r.stderr).toContain('--sandbox-reset');
      expect(await readFile(stateFile(), 'utf8')).toBe(text);

      // The way out that the message names.
      const reset = await htorder(['run', '--sandbox', '--sandbox-reset', '--json', file], dir);
      expect(reset.code, reset.stderr).toBe(ExitCode.Ok);
      expect(reset.jobs.map((j) => j.status)).toEqual(['submitted']);
    },
    60_000,
  );

  it('a state larger than the bound is refused before it is read', async () => {
    const dir = await tempDirPerTest();
    const file = await orders(dir, 'orders.yaml', 'PO-BIG');
    await mkdir(join(stateFile(), '..'), { recursive: true });
    await writeFile(stateFile(), '');
    await truncate(stateFile(), 33 * 1024 * 1024);
    const r = await htorder(['plan', '--sandbox', file], dir);
    expect(r.code).toBe(ExitCode.Usage);
    expect(r.stderr).toContain(`${stateFile()} is larger than 32 MiB`);
  }, 60_000);
});

describe('two processes on one sandbox state at once', () => {
  it('hand out every job number once and see each other’s jobs; the same order is created once', async () => {
    const dir = await tempDirPerTest();
    const a = await orders(dir, 'a.yaml', 'PO-A', 6);
    const b = await orders(dir, 'b.yaml', 'PO-B', 6);
    const both = await orders(dir, 'both.yaml', 'PO-SHARED', 4);

    // The same content under many order numbers is the workload here, not a suspected duplicate.
    const noDuplicates = ['--duplicate-window', '0'];
    const [ra, rb] = await Promise.all([
      htorder(['run', '--sandbox', '--json', ...noDuplicates, a, both], dir),
      htorder(['run', '--sandbox', '--json', ...noDuplicates, b, both], dir),
    ]);
    expect(ra.code, ra.stderr).toBe(ExitCode.Ok);
    expect(rb.code, rb.stderr).toBe(ExitCode.Ok);

    const own = [...ra.jobs, ...rb.jobs].filter((j) => !j.orderNumber.startsWith('PO-SHARED'));
    expect(own.map((j) => j.status)).toEqual(Array(12).fill('submitted'));
    // The shared orders: each created by exactly one of the two, the other found it.
    const shared = [...ra.jobs, ...rb.jobs].filter((j) => j.orderNumber.startsWith('PO-SHARED'));
    for (let i = 1; i <= 4; i++) {
      const pair = shared.filter((j) => j.orderNumber === `PO-SHARED-${i}`);
      expect(pair.map((j) => j.status).sort()).toEqual(['already-submitted', 'submitted']);
      expect(pair[0].jobNumber).toBe(pair[1].jobNumber);
    }
    const numbers = [...own, ...shared.filter((j) => j.status === 'submitted')].map((j) => j.jobNumber);
    expect(new Set(numbers).size).toBe(16);

    // Saved, all of them: one more run finds every job in the ledger and in the sandbox.
    const again = await htorder(['run', '--sandbox', '--json', ...noDuplicates, a, b, both], dir);
    expect(again.jobs.map((j) => j.status)).toEqual(Array(16).fill('already-submitted'));
    const saved = JSON.parse(await readFile(stateFile(), 'utf8')) as { created: { jobNumber: number }[] };
    expect(saved.created.map((c) => c.jobNumber).sort()).toEqual([...numbers].sort());
  }, 90_000);
});

/** A job as the state file keeps it (valid in every field, so only the number is wrong). */
function job(jobNumber: number): Record<string, unknown> {
  return {
    jobNumber,
    customerId: 1001,
    region: 'us',
    description: null,
    comments: null,
    orderNumber: 'PO-X',
    dueDay: '2026-03-10',
    timeSensitive: false,
    mustDate: false,
    orderGroup: null,
    orderGroupSequence: null,
    customerUserId: 501,
    creator: 'Demo User',
    originCode: 'API',
    dateInMs: 0,
    status: 'Received',
    statusSinceMs: 0,
    dateOutMs: null,
    location: 'DAL',
    deliveryMethod: 'UPSGND',
    deliveryLabel: 'UPS Ground',
    isCollection: false,
    lines: [],
    shippingAddresses: [{ trackingNumber: null, trackingLink: null }],
    invoiceNumber: null,
    totalJobCost: 0,
    taxTotal: 0,
  };
}
