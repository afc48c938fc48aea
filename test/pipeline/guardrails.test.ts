import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runApprove, type ApproveInput } from '../../src/cli/approve-command.js';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { sink } from '../support/sink.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

let h: PipelineHarness;
beforeAll(async () => {
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
