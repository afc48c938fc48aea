import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runApprove, type ApproveInput } from '../../src/cli/approve-command.js';
import { type ApplyInput, runApply } from '../../src/cli/saved-plan-command.js';
import type { SavedPlan } from '../../src/pipeline/saved-plan.js';
import { CLI, requireDist } from '../support/dist.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

const exec = promisify(execFile);

const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ??
  addFormatsImport) as unknown as (a: Ajv2020) => void;
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validatePlan = ajv.compile(
  JSON.parse(await readFile(new URL('../../schemas/plan.schema.json', import.meta.url), 'utf8')),
);

let h: PipelineHarness;
beforeAll(async () => {
  requireDist();
  h = await PipelineHarness.start();
});
afterAll(async () => h.close());
beforeEach(async () => h.reset());

/** POST /Jobs creates the sandbox has seen (validateOnly dry runs are not creates). */
async function creates(): Promise<number> {
  return (await h.sandbox.admin.jobs()).length;
}

async function approve(
  opts: Partial<ApproveInput>,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runApprove(
    { paths: [], flags: {}, ...opts },
    { stdout: out.stream, stderr: err.stream, env: { ...h.env(), ...env }, cwd: h.workDir },
  );
  return { code, stdout: out.text(), stderr: err.text() };
}

describe('maxJobCost', () => {
  it('holds a job over the limit (exit 4, nothing sent); approve, then run sends it once; again sends nothing', async () => {
    const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-1', items: ITEMS.reorder }]));
    const env = { HTORDER_MAX_JOB_COST: '1' };
    const held = await h.cli('run', [file], { env });
    expect(held.code).toBe(4);
    expect(await creates()).toBe(0);
    const report = await h.report(file);
    expect(report.jobs[0]).toMatchObject({ status: 'awaiting-approval' });
    expect(report.jobs[0]!.errors[0]).toMatchObject({ code: 'approval.job-cost' });
    expect(await readFile(`${file}.errors.txt`, 'utf8')).toContain('maxJobCost');
    expect(await readFile(`${file}.result.csv`, 'utf8')).toContain('awaiting approval: estimate');
    expect(held.stderr).toContain('awaiting-approval');
    // Amounts carry the account's currency, in the terminal as in the reasons.
    expect(held.stderr).toContain('estimated total: 150.00 USD');
    expect(held.stderr).toContain('estimate 150.00 USD is over maxJobCost 1.00 USD');

    const listed = await approve({ list: true });
    expect(listed.stderr).toContain('PO-1');
    const ok = await approve({ paths: [file], note: 'checked' });
    expect(ok.code).toBe(0);
    expect((await approve({ list: true })).stderr).toContain('nothing waits');

    const sent = await h.cli('run', [file], { env });
    expect(sent.code).toBe(0);
    expect(await creates()).toBe(1);
    expect((await h.report(file)).jobs[0]!.warnings.map((w) => w.code)).toContain('approval.approved');
    const again = await h.cli('run', [file], { env });
    expect(again.code).toBe(0);
    expect(await creates()).toBe(1);
  });
});

/** The real `htorder run` in a process of its own; its exit code. */
async function runProcess(files: string[], env: Record<string, string>): Promise<number> {
  try {
    await exec(process.execPath, [CLI, 'run', ...files], {
      cwd: h.workDir,
      env: { ...process.env, ...h.env(), ...env },
    });
    return 0;
  } catch (err) {
    return (err as { code: number }).code;
  }
}

describe('maxDailyCost', () => {
  it('two processes sharing a ledger share the day: the input that does not fit waits (exit 4), nothing over is sent', async () => {
    // Each reorder of 50 is estimated at 150.00: one fits in 200, two do not.
    const a = await h.write('a.yaml', manifest([{ orderNumber: 'DAY-A', items: ITEMS.reorder }]));
    const b = await h.write('b.yaml', manifest([{ orderNumber: 'DAY-B', items: ITEMS.reorder }]));
    const env = { HTORDER_MAX_DAILY_COST: '200' };
    const codes = await Promise.all([runProcess([a], env), runProcess([b], env)]);
    expect(codes.sort()).toEqual([0, 4]);
    expect(await creates()).toBe(1);
    const statuses = [(await h.report(a)).jobs[0]!.status, (await h.report(b)).jobs[0]!.status].sort();
    expect(statuses).toEqual(['awaiting-approval', 'submitted']);
    const waiting = statuses[0] === (await h.report(a)).jobs[0]!.status ? a : b;
    expect((await h.report(waiting)).jobs[0]!.errors[0]).toMatchObject({ code: 'approval.daily-cost' });

    // Approved, it goes through though the day is spent; once.
    expect((await approve({ paths: [waiting] })).code).toBe(0);
    expect((await h.cli('run', [a, b], { env })).code).toBe(0);
    expect(await creates()).toBe(2);
  });

  it('plan shows what would wait and counts nothing', async () => {
    const a = await h.write('a.yaml', manifest([{ orderNumber: 'P-A', items: ITEMS.reorder }]));
    const env = { HTORDER_MAX_DAILY_COST: '100' };
    const planned = await h.cli('plan', [a], { env });
    expect(planned.code).toBe(4);
    expect((await h.report(a)).jobs[0]!.status).toBe('awaiting-approval');
    // plan sent nothing and counted nothing: with a limit that fits, run sends it.
    expect((await h.cli('run', [a], { env: { HTORDER_MAX_DAILY_COST: '150' } })).code).toBe(0);
    expect(await creates()).toBe(1);
  });
});

describe('limits of one input', () => {
  it('maxLineQuantity holds the job with the big line; all or nothing holds the rest back unless --partial', async () => {
    const file = await h.write(
      'lines.yaml',
      manifest([
        { orderNumber: 'Q-1', items: ITEMS.reorder },
        { orderNumber: 'Q-2', items: ITEMS.print },
      ]),
    );
    const env = { HTORDER_MAX_LINE_QUANTITY: '60' };
    expect((await h.cli('run', [file], { env })).code).toBe(4);
    expect(await creates()).toBe(0);
    const r = await h.report(file);
    expect(r.jobs.map((j) => j.status)).toEqual(['not-submitted', 'awaiting-approval']);
    expect(r.jobs[0]!.errors[0]!.message).toContain('waits for approval');
    expect(r.jobs[1]!.errors[0]).toMatchObject({ code: 'approval.line-quantity' });

    expect((await h.cli('run', [file], { env, partial: true })).code).toBe(4);
    expect(await creates()).toBe(1);
    expect((await h.report(file)).jobs.map((j) => j.status)).toEqual(['submitted', 'awaiting-approval']);
  });

  it('maxInputCost holds every job of an input whose jobs together cost too much', async () => {
    const file = await h.write('two.yaml', manifest('IC', 2));
    expect((await h.cli('run', [file], { env: { HTORDER_MAX_INPUT_COST: '200' } })).code).toBe(4);
    expect(await creates()).toBe(0);
    const r = await h.report(file);
    expect(r.jobs.map((j) => j.status)).toEqual(['awaiting-approval', 'awaiting-approval']);
    expect(r.jobs[0]!.errors[0]!.message).toContain('over maxInputCost 200.00 USD');
    expect((await h.cli('run', [file], { env: { HTORDER_MAX_INPUT_COST: '300' } })).code).toBe(0);
    expect(await creates()).toBe(2);
  });

  it('an approval is for the fingerprint approved: a job changed since waits again', async () => {
    const env = { HTORDER_MAX_JOB_COST: '1' };
    const file = await h.write('c.yaml', manifest([{ orderNumber: 'CH-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [file], { env })).code).toBe(4);
    expect((await approve({ paths: [file] })).code).toBe(0);
    await h.write('c.yaml', manifest([{ orderNumber: 'CH-1', items: ITEMS.reorder.replace('50', '40') }]));
    expect((await h.cli('run', [file], { env })).code).toBe(4);
    expect(await creates()).toBe(0);
    expect((await approve({ list: true })).stderr).toContain('CH-1');
  });
});

describe('suspected duplicates', () => {
  const env = { HTORDER_DUPLICATE_WINDOW: '12h' };

  it('the same content under a new order number within the window waits; the report names no other order, approve --list does; approved, it is sent once', async () => {
    const first = await h.write('first.yaml', manifest([{ orderNumber: 'SHOP-1001', items: ITEMS.reorder }]));
    expect((await h.cli('run', [first], { env })).code).toBe(0);
    const jobNumber = (await h.report(first)).jobs[0]!.jobNumber;
    const again = await h.write('again.yaml', manifest([{ orderNumber: 'EXPORT2-1001', items: ITEMS.reorder }]));
    expect((await h.cli('run', [again], { env })).code).toBe(4);
    expect(await creates()).toBe(1);
    const held = (await h.report(again)).jobs[0]!;
    expect(held.status).toBe('awaiting-approval');
    expect(held.errors[0]!.code).toBe('approval.duplicate');
    expect(held.errors[0]!.message).toContain('an order sent from another input of this account within the last 12h');
    // Whoever dropped the input reads its reports: nothing in them names the other order or its date.
    for (const report of ['result.json', 'result.csv', 'errors.txt']) {
      const text = await readFile(`${again}.${report}`, 'utf8');
      expect(text, report).not.toContain('SHOP-1001');
      expect(text, report).not.toContain(String(jobNumber));
    }
    // The operator sees which order it looks like.
    const listed = (await approve({ list: true })).stderr;
    expect(listed).toContain('"SHOP-1001"');
    expect(listed).toContain(`job ${jobNumber}`);

    expect((await approve({ paths: [`${again}.result.json`], note: 'a real second order' })).code).toBe(0);
    expect((await h.cli('run', [again], { env })).code).toBe(0);
    expect((await h.cli('run', [again], { env })).code).toBe(0);
    expect(await creates()).toBe(2);
  });

  it('0 turns the check off, and another address is no duplicate', async () => {
    const first = await h.write('first.yaml', manifest([{ orderNumber: 'S-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [first], { env })).code).toBe(0);
    const other = await h.write(
      'other.yaml',
      manifest([{ orderNumber: 'S-2', items: ITEMS.reorder }]).replace('1 Main St', '2 Main St'),
    );
    expect((await h.cli('run', [other], { env })).code).toBe(0);
    const same = await h.write('same.yaml', manifest([{ orderNumber: 'S-3', items: ITEMS.reorder }]));
    expect((await h.cli('run', [same], { env: { HTORDER_DUPLICATE_WINDOW: '0' } })).code).toBe(0);
    expect(await creates()).toBe(3);
  });

  it('holds its own job only: the other orders of its input are sent (all or nothing does not hold them back)', async () => {
    const first = await h.write('first.yaml', manifest([{ orderNumber: 'R-1', items: ITEMS.reorder }]));
    expect((await h.cli('run', [first], { env })).code).toBe(0);
    const mixed = await h.write(
      'mixed.yaml',
      manifest([
        { orderNumber: 'R-1-AGAIN', items: ITEMS.reorder },
        { orderNumber: 'NEW-1', items: ITEMS.stock },
      ]),
    );
    const planned = await h.cli('plan', [mixed], { env });
    expect(planned.code).toBe(4);
    expect((await h.report(mixed)).jobs.map((j) => j.status)).toEqual(['awaiting-approval', 'valid']);
    const ran = await h.cli('run', [mixed], { env });
    expect(ran.code).toBe(4);
    expect((await h.report(mixed)).jobs.map((j) => j.status)).toEqual(['awaiting-approval', 'submitted']);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber).sort()).toEqual(['NEW-1', 'R-1']);
  });

  it('a limit still holds the whole input', async () => {
    const mixed = await h.write(
      'mixed.yaml',
      manifest([
        { orderNumber: 'L-1', items: ITEMS.reorder },
        { orderNumber: 'L-2', items: ITEMS.stock },
      ]),
    );
    expect((await h.cli('run', [mixed], { env: { ...env, HTORDER_MAX_LINE_QUANTITY: '40' } })).code).toBe(4);
    expect((await h.report(mixed)).jobs.map((j) => j.status)).toEqual(['awaiting-approval', 'not-submitted']);
    expect(await creates()).toBe(0);
  });

  it('a cancelled order is no reason to hold another with its content', async () => {
    const text = manifest([{ orderNumber: 'C-1', items: ITEMS.reorder }]);
    const first = await h.write('first.yaml', text);
    expect((await h.cli('run', [first], { env })).code).toBe(0);
    await h.write('first.yaml', text.replace('  - orderNumber: C-1\n', '  - orderNumber: C-1\n    cancel: true\n'));
    expect((await h.cli('run', [first], { env })).code).toBe(0);
    expect((await h.report(first)).jobs[0]!.warnings.map((w) => w.code)).toContain('changes.cancelled');
    const other = await h.write('other.yaml', manifest([{ orderNumber: 'C-2', items: ITEMS.reorder }]));
    expect((await h.cli('run', [other], { env })).code).toBe(0);
    expect((await h.report(other)).jobs[0]!.status).toBe('submitted');
  });
});

async function apply(
  input: Partial<ApplyInput> & { plan: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = sink();
  const err = sink();
  const code = await runApply(
    { flags: {}, ...input },
    { stdout: out.stream, stderr: err.stream, env: h.env(), cwd: h.workDir },
  );
  return { code, stdout: out.text(), stderr: err.text() };
}

describe('saved plans: plan --out, then apply', () => {
  it('apply sends exactly the planned jobs, once; a second apply sends nothing', async () => {
    const file = await h.write('p.yaml', manifest('PL', 2));
    const planFile = `${h.workDir}/plan.json`;
    const planned = await h.cli('plan', [file], { out: planFile, env: { HTORDER_MAX_DAILY_COST: '1000' } });
    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain('2 job(s), estimated total 300.00 USD');
    expect(planned.stderr).toContain('maxDailyCost 1000.00 USD: 300.00 USD');
    const plan = JSON.parse(await readFile(planFile, 'utf8')) as SavedPlan;
    expect(validatePlan(plan), JSON.stringify(validatePlan.errors)).toBe(true);
    expect(plan.inputs[0]!.jobs.map((j) => j.orderNumber)).toEqual(['PL-1', 'PL-2']);
    expect(await creates()).toBe(0);

    expect((await apply({ plan: planFile })).code).toBe(0);
    expect(await creates()).toBe(2);
    expect((await apply({ plan: planFile })).code).toBe(0);
    expect(await creates()).toBe(2);
  });

  it('plan --out --json of several inputs saves and lists each job; apply --json lists each job it sent', async () => {
    const a = await h.write('a.yaml', manifest('MA', 2));
    const b = await h.write('b.yaml', manifest('MB', 1));
    const planFile = `${h.workDir}/plan.json`;
    const planned = await h.cli('plan', [a, b], { out: planFile, json: true });
    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain('3 job(s), estimated total 450.00 USD');
    // The human table of each input names its jobs, read as the input ended.
    for (const n of ['MA-1', 'MA-2', 'MB-1']) expect(planned.stderr).toContain(n);
    const listed = JSON.parse(planned.stdout) as { inputs: { jobs: { orderNumber: string; status: string }[] }[] };
    expect(listed.inputs.map((i) => i.jobs.map((j) => j.orderNumber))).toEqual([['MA-1', 'MA-2'], ['MB-1']]);
    const text = await readFile(planFile, 'utf8');
    const plan = JSON.parse(text) as SavedPlan;
    expect(text).toBe(`${JSON.stringify(plan, null, 2)}\n`);
    expect(validatePlan(plan), JSON.stringify(validatePlan.errors)).toBe(true);
    expect(plan.currency).toBe('USD');
    expect(plan.inputs.map((i) => i.jobs.map((j) => j.orderNumber))).toEqual([['MA-1', 'MA-2'], ['MB-1']]);

    const applied = await apply({ plan: planFile, json: true });
    expect(applied.code).toBe(0);
    const sent = JSON.parse(applied.stdout) as { inputs: { jobs: { orderNumber: string; status: string }[] }[] };
    expect(sent.inputs.map((i) => i.jobs.map((j) => `${j.orderNumber} ${j.status}`))).toEqual([
      ['MA-1 submitted', 'MA-2 submitted'],
      ['MB-1 submitted'],
    ]);
    expect(applied.stderr).toContain('MB-1');
    expect(await creates()).toBe(3);
  });

  it('saves the jobs plan reports valid, in the input’s order: none waiting for approval, none refused', async () => {
    const file = await h.write(
      'mixed.yaml',
      manifest([
        { orderNumber: 'MX-1', items: ITEMS.reorder },
        { orderNumber: 'MX-2', items: ITEMS.print },
        { orderNumber: 'MX-3', items: ITEMS.tooFew },
        { orderNumber: 'MX-4', items: ITEMS.reorder },
        { orderNumber: 'MX-5', items: ITEMS.reorder.replace('quantity: 50', 'quantity: 0') },
      ]),
    );
    const planFile = `${h.workDir}/plan.json`;
    // The print job costs more than a reorder: over the limit, it waits for an approval.
    await h.cli('plan', [file], { out: planFile, env: { HTORDER_MAX_JOB_COST: '200' } });
    const statuses = (await h.report(file)).jobs.map((j) => [j.orderNumber, j.status]);
    expect(statuses).toEqual([
      ['MX-1', 'valid'],
      ['MX-2', 'awaiting-approval'],
      ['MX-3', 'invalid'],
      ['MX-4', 'valid'],
      ['MX-5', 'invalid'],
    ]);
    const plan = JSON.parse(await readFile(planFile, 'utf8')) as SavedPlan;
    expect(plan.inputs[0]!.jobs.map((j) => j.orderNumber)).toEqual(['MX-1', 'MX-4']);
  });

  it('a job added to the input after the plan refuses the apply (its bytes changed): nothing sent', async () => {
    const file = await h.write('p.yaml', manifest('ED', 1));
    const planFile = `${h.workDir}/plan.json`;
    expect((await h.cli('plan', [file], { out: planFile })).code).toBe(0);
    await h.write('p.yaml', manifest('ED', 2));
    const r = await apply({ plan: planFile });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('changed since it was planned');
    expect(await creates()).toBe(0);
  });

  it('an estimate higher than planned (a price change) refuses beyond the tolerance, nothing sent; within it, applies', async () => {
    const file = await h.write('p.yaml', manifest('PR', 1));
    const planFile = `${h.workDir}/plan.json`;
    expect((await h.cli('plan', [file], { out: planFile })).code).toBe(0);
    // The price the plan saw was 120.00; the account's is 150.00 now.
    const plan = JSON.parse(await readFile(planFile, 'utf8')) as SavedPlan;
    plan.inputs[0]!.jobs[0]!.estimate = 120;
    await writeFile(planFile, JSON.stringify(plan));
    const refused = await apply({ plan: planFile });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the estimate rose from 120.00 to 150.00');
    expect(await creates()).toBe(0);
    expect((await apply({ plan: planFile, tolerance: 30 })).code).toBe(0);
    expect(await creates()).toBe(1);
  });

  it('refuses another account, a changed request and an old plan: nothing sent', async () => {
    const file = await h.write('p.yaml', manifest('AC', 1));
    const planFile = `${h.workDir}/plan.json`;
    expect((await h.cli('plan', [file], { out: planFile })).code).toBe(0);
    const plan = JSON.parse(await readFile(planFile, 'utf8')) as SavedPlan;
    await writeFile(planFile, JSON.stringify({ ...plan, account: 'https://elsewhere#1' }));
    expect((await apply({ plan: planFile })).stderr).toContain('not ');
    const changed = structuredClone(plan);
    changed.inputs[0]!.jobs[0]!.request = '0'.repeat(64);
    await writeFile(planFile, JSON.stringify(changed));
    const r = await apply({ plan: planFile });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('differs from the plan');
    await writeFile(
      planFile,
      JSON.stringify({ ...plan, createdAt: new Date(Date.now() - 25 * 3_600_000).toISOString() }),
    );
    expect((await apply({ plan: planFile })).stderr).toContain('older than --max-age 24 h');
    expect(await creates()).toBe(0);
  });
});
