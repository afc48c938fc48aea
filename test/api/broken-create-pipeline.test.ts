import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { startSandboxProxy } from '../support/sandbox-proxy.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * `htorder run` against the real sandbox, through a loopback proxy that lets each real create
 * happen and then replaces its answer: the job exists, the answer cannot be read. The pipeline
 * must settle it by search: exactly one job, reported submitted with its job number.
 */
let h: PipelineHarness;
let proxy: Awaited<ReturnType<typeof startSandboxProxy>>;
/** What the next real creates are answered with (undefined: the sandbox's own answer). */
let breakCreate: ((res: import('node:http').ServerResponse, sandboxText: string) => void) | undefined;

beforeAll(async () => {
  h = await PipelineHarness.start();
  proxy = await startSandboxProxy(h, {
    reply: (x, sandbox, res) => {
      if (x.jobsPost?.validateOnly !== false || !sandbox.ok || !breakCreate) return false;
      breakCreate(res, sandbox.text);
      return true;
    },
  });
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});
beforeEach(async () => {
  breakCreate = undefined;
  await h.reset();
});

const viaProxy = (): Record<string, string> => proxy.env();

const BROKEN: Array<[string, (res: import('node:http').ServerResponse) => void]> = [
  ['null', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('null')],
  ['a non-JSON 200', (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('Created OK')],
  ['JSON without a job number', (res) => res.writeHead(201, { 'content-type': 'application/json' }).end('{}')],
];

describe('htorder run: a create answer that cannot be read is settled by search', () => {
  for (const [name, reply] of BROKEN) {
    it(`${name}: exactly one job, reported submitted with its job number`, async () => {
      breakCreate = reply;
      const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-BROKEN-1', items: ITEMS.reorder }]));
      const { code, stderr } = await h.cli('run', [file], { env: viaProxy() });
      const created = await h.sandbox.admin.jobs();
      expect(created).toHaveLength(1);
      const report = await h.report(file);
      expect(report.jobs[0]).toMatchObject({ status: 'submitted', jobNumber: created[0]?.jobNumber });
      expect(code).toBe(0);
      expect(stderr).not.toContain('TypeError');
      expect(stderr).not.toContain('Cannot read properties');
    });
  }
});

/** The sandbox's create answer with its totalJobCost replaced. */
const costAs =
  (cost: (n: number) => unknown) =>
  (res: import('node:http').ServerResponse, text: string): void => {
    const answer = JSON.parse(text) as { totalJobCost: number };
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...answer, totalJobCost: cost(answer.totalJobCost) }));
  };

describe('htorder run: a create answer whose cost is not a number', () => {
  it('a cost in a decimal string is reported as that number, once', async () => {
    let sandboxCost: number | undefined;
    breakCreate = costAs((n) => {
      sandboxCost = n;
      return n.toFixed(2);
    });
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-COST-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file], { env: viaProxy() })).code).toBe(0);
    const job = (await h.report(file)).jobs[0];
    expect(job).toMatchObject({ status: 'submitted' });
    expect(typeof job?.totalJobCost).toBe('number');
    expect(job?.totalJobCost).toBeCloseTo(sandboxCost as number, 2);
    expect(await h.sandbox.admin.jobs()).toHaveLength(1);
  });

  it.each([
    ['words', 'twelve dollars'],
    ['an object', { amount: 12 }],
    ['a comma decimal', '12,50'],
  ])('a cost given as %s is left out of the report (null), the job still submitted once', async (_n, cost) => {
    breakCreate = costAs(() => cost);
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-COST-2', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file], { env: viaProxy() })).code).toBe(0);
    expect((await h.report(file)).jobs[0]).toMatchObject({ status: 'submitted', totalJobCost: null });
    expect(await h.sandbox.admin.jobs()).toHaveLength(1);
  });
});
