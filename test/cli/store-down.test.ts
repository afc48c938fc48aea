import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { type Proc, sleep } from '../support/chaos.js';
import { createdPerOrder, type Fleet, manifestFolder, useFleet } from '../support/fleet.js';
import { startLoopback } from '../support/loopback-server.js';
import { pgClusterForFile } from '../support/pg-cluster.js';
import { CODED_ADDRESS } from '../support/yaml-manifests.js';

/**
 * `run` against a ledger database that goes away in the middle of an input, between the jobs'
 * own stages (where each job carries its failure): the input is undecided — exit 3, said on
 * stderr and in the --json summary — never exit 1, and a run once the database is back sends
 * every order exactly once. The database is really stopped, at a moment the sandbox holds
 * open: a request of the run is answered late (a latency fault) while the test stops it.
 */

const cluster = await pgClusterForFile();

/** What a host waits for the database before it gives up: short, so the run ends while it is away. */
const WAIT = { HTORDER_LEDGER_WAIT_MS: '1000' };

/** Waits until the sandbox has been sent `route` `n` times (the request is then held by its latency fault). */
async function whenSent(sandbox: Sandbox, route: string, n: number, run: Proc): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (((await sandbox.admin.calls())[route] ?? 0) < n) {
    if (Date.now() > deadline) throw new Error(`${route} was not sent ${n} times:\n${run.output()}`);
    await sleep(20);
  }
}

/** The --json summary line of a run's output. */
function summary(output: string): { exitCode: number; inputs: { status: string; problem?: string }[] } {
  const line = output.split('\n').find((l) => l.startsWith('{"command"'));
  if (!line) throw new Error(`no --json summary in:\n${output}`);
  return JSON.parse(line);
}

/**
 * Stops the database while `run` waits on its held request: the run ends undecided — exit 3,
 * no internal error, the input said to be run again later. Its output.
 */
async function undecidedOnceStopped(run: Proc): Promise<string> {
  await cluster!.stop();
  expect(await run.exited, run.output()).toBe(3);
  const out = run.output();
  expect(out).not.toContain('internal error');
  expect(out).toContain('not finished, run it again later: cannot reach the ledger database');
  return out;
}

/** The database back and the faults gone: the same input run again ends well (exit 0). */
async function runAgainOnceBack(
  the: { sandbox: Sandbox; fleet: Fleet },
  dir: string,
  env: Record<string, string>,
): Promise<void> {
  await cluster!.start();
  await the.sandbox.admin.clearFaults();
  const again = the.fleet.spawn(0, ['run', 'orders.yaml'], dir, env);
  expect(await again.exited, again.output()).toBe(0);
}

describe.skipIf(!cluster)('run: the ledger database going away between the jobs of an input', () => {
  const the = useFleet(cluster);
  // Whatever a test did, the next one has its database.
  afterEach(() => cluster!.start());

  it('after the jobs, before the ledger records that it vouches for the account: exit 3, then each order once', async () => {
    const dir = await manifestFolder('AFTER', 1);
    // The create is answered 3 s late: the database is stopped meanwhile, so its outcome and
    // then the account's record (a new ledger vouches once every order was searched) cannot be written.
    await the.sandbox.admin.setFaults([
      { route: 'POST /Jobs', when: 'create', kind: 'latency', latencyMs: 3000, times: 1 },
    ]);
    const hook = await startLoopback((_req, res) => {
      res.end('ok');
    });
    const run = the.fleet.spawn(0, ['run', 'orders.yaml', '--json'], dir, {
      ...WAIT,
      HTORDER_NOTIFY_URL: `${hook.url}/hook`,
    });
    await whenSent(the.sandbox, 'POST /Jobs', 2, run); // its dry run, then its create
    const out = await undecidedOnceStopped(run);
    expect(out).toContain('not recorded that the ledger vouches for the account');
    // The day's upkeep after the input fails too: said, and the exit code stays the input's.
    expect(out).toContain('could not keep the ledger up; the next run tries again');
    const json = summary(out);
    expect(json.exitCode).toBe(3);
    expect(json.inputs[0]?.status).toBe('unavailable');
    expect(json.inputs[0]?.problem).toMatch(/^cannot reach the ledger database postgres:\/\/[^:@]+@127\.0\.0\.1/);
    // The webhook is told, as of any run the API or the store left undecided.
    await hook.close();
    const told = hook.seen.map((r) => JSON.parse(r.body) as { event: string; problem?: string });
    expect(told).toEqual([
      expect.objectContaining({
        event: 'api-unavailable',
        problem: expect.stringContaining('cannot reach the ledger database'),
      }),
    ]);

    await runAgainOnceBack(the, dir, WAIT);
    expect(Object.fromEntries(await createdPerOrder(the.sandbox))).toEqual({ 'AFTER-1': 1 });
    expect((await the.fleet.entries()).map((e) => [e.orderNumber, e.state])).toEqual([['AFTER-1', 'submitted']]);
  }, 90_000);

  it("after the dry runs, while the day's budget is counted (maxDailyCost): exit 3, nothing sent, then each order once", async () => {
    const dir = await manifestFolder('BUDGET', 1);
    const env = { ...WAIT, HTORDER_MAX_DAILY_COST: '100000' };
    // The dry run is answered 3 s late: the database is stopped meanwhile, before the budget is counted.
    await the.sandbox.admin.setFaults([
      { route: 'POST /Jobs', when: 'validate', kind: 'latency', latencyMs: 3000, times: 1 },
    ]);
    const run = the.fleet.spawn(0, ['run', 'orders.yaml', '--json'], dir, env);
    await whenSent(the.sandbox, 'POST /Jobs', 1, run);
    const out = await undecidedOnceStopped(run);
    expect(out).toContain("the input's guardrails were not applied: nothing of it was sent");
    expect(summary(out).inputs[0]?.status).toBe('unavailable');
    expect((await the.sandbox.admin.calls())['POST /Jobs']).toBe(1); // the dry run only

    await runAgainOnceBack(the, dir, env);
    expect(Object.fromEntries(await createdPerOrder(the.sandbox))).toEqual({ 'BUDGET-1': 1 });
  }, 90_000);

  it('before the jobs start, while it looks for other writers to the account: exit 3, nothing sent, then each order once', async () => {
    // Night 1: the ledger comes to vouch for the account.
    const first = await manifestFolder('FIRST', 2);
    expect(await the.fleet.spawn(0, ['run', 'orders.yaml'], first, WAIT).exited).toBe(0);
    // Night 2: an order the dry run refuses; the look for other writers notes where it stopped.
    const refused = await mkdtemp(join(tmpdir(), 'htorder-store-down-'));
    await writeFile(
      join(refused, 'orders.yaml'),
      `version: 1\njobs:\n  - orderNumber: REFUSED-1\n${CODED_ADDRESS}    items:\n      - { itemType: Asset, code: NO-SUCH-ASSET, quantity: 5 }\n`,
    );
    expect(await the.fleet.spawn(0, ['run', 'orders.yaml'], refused, WAIT).exited).toBe(1);
    // Night 3: new orders; the look's listing is answered 3 s late, the database stopped meanwhile.
    const dir = await manifestFolder('BEFORE', 2);
    await the.sandbox.admin.resetCalls();
    await the.sandbox.admin.setFaults([{ route: 'GET /Jobs/active', kind: 'latency', latencyMs: 3000, times: 1 }]);
    const run = the.fleet.spawn(0, ['run', 'orders.yaml', '--json'], dir, WAIT);
    await whenSent(the.sandbox, 'GET /Jobs/active', 1, run);
    const out = await undecidedOnceStopped(run);
    expect(out).toContain('no order of this input was looked up or sent');
    const json = summary(out);
    expect(json.inputs[0]?.status).toBe('unavailable');
    expect((await the.sandbox.admin.calls())['POST /Jobs'] ?? 0).toBe(0);

    await runAgainOnceBack(the, dir, WAIT);
    expect(Object.fromEntries(await createdPerOrder(the.sandbox))).toEqual({
      'FIRST-1': 1,
      'FIRST-2': 1,
      'BEFORE-1': 1,
      'BEFORE-2': 1,
    });
  }, 90_000);
});
