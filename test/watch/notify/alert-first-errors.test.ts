import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReportError, ResultReport } from '../../../src/report/model.js';
import { firstErrors, heldReasons } from '../../../src/report/write-errors-txt.js';
import { startLoopback } from '../../support/loopback-server.js';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { ITEMS, manifest } from '../../support/yaml-manifests.js';

/**
 * An alert for an invalid input quotes its first errors (a few, each bounded, escaped) instead
 * of "see its reports"; and a watcher's log names the dropped file, not its private copy.
 */

const fx = watchFixture('htorder-alert-errors-');
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const finished = async (name: string): Promise<string | undefined> => {
  for (const folder of ['done', 'failed']) {
    const names = await readdir(join(fx.drop.path, folder)).catch(() => [] as string[]);
    if (names.includes(name)) return folder;
  }
  return undefined;
};

describe('a watcher on a first walk', () => {
  it('a Slack alert for an invalid input quotes its first errors, escaped', async () => {
    const hook = await startLoopback((_req, res) => void res.end('ok'));
    closers.push(hook.close);
    const w = await startWatch(
      { target: fx.drop.path },
      { ...fx.env, HTORDER_NOTIFY_URL: `${hook.url}/services/T1/B2/tok`, HTORDER_NOTIFY_FORMAT: 'slack' },
    );
    try {
      const text = manifest([
        { orderNumber: 'PO-OK-1', items: ITEMS.reorder },
        { orderNumber: 'PO-<!channel>', items: '      - { itemType: Asset, code: A10001, quantity: -5 }\n' },
      ]);
      await writeFile(join(fx.drop.path, 'orders.yaml'), text);
      await waitFor(() => (hook.seen.length > 0 ? true : undefined), 'a notification');
      expect(await finished('orders.yaml')).toBe('failed');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const slack = JSON.parse(hook.seen[0]?.body ?? '{}') as { blocks: { text?: { text: string } }[] };
    const problem = slack.blocks.map((b) => b.text?.text ?? '').find((t) => t.startsWith('*Problem*')) ?? '';
    expect(problem).not.toContain('see its reports');
    // The input's own line and field, as errors.txt has them.
    expect(problem).toMatch(/orders\.yaml:\d+:\d+: jobs\[1\]\.items\[0\]\.quantity: /);
    // Slack markup from the input arrives as text.
    expect(problem).not.toContain('<!channel>');
  });

  it("the watcher's job outcome lines name the dropped file, not its private copy", async () => {
    const w = await startWatch({ target: fx.drop.path }, { ...fx.env, HTORDER_LOG_LEVEL: 'info' });
    try {
      await writeFile(join(fx.drop.path, 'orders.yaml'), manifest('PO-LOG', 2));
      await waitFor(finished.bind(null, 'orders.yaml'), 'the input to finish');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const outcomes = w.logs().filter((l) => l.msg === 'job outcome');
    expect(outcomes).toHaveLength(2);
    for (const line of outcomes) expect(line.file).toBe(join(fx.drop.path, 'processing', 'orders.yaml'));
  });
});

const error = (code: string, message: string, line: number): ReportError => ({
  code,
  message,
  field: 'jobs[0].orderNumber',
  source: { line, column: 3 },
});

function reportWith(errors: ReportError[]): ResultReport {
  return {
    summary: { jobs: 1, items: 0, errors: errors.length, warnings: 0, byStatus: {} },
    errors: [],
    warnings: [],
    input: { file: '/private/copy/orders.yaml', sha256: null, format: 'yaml' },
    jobs: [{ errors, warnings: [], items: [] }],
  } as unknown as ResultReport;
}

describe('firstErrors', () => {
  it('quotes at most three, says how many there are, cuts long ones and escapes control characters', () => {
    const errors = [
      error('run.held-back', 'not submitted: another job of the input failed', 1),
      error('schema.type', 'must be a string\u001b[31m', 2),
      error('schema.type', 'x'.repeat(1000), 3),
      error('schema.type', 'third', 4),
      error('schema.type', 'fourth', 5),
    ];
    const text = firstErrors(reportWith(errors), 'orders.yaml') ?? '';
    expect(
      text.startsWith('first 3 of 5 errors: orders.yaml:2:3: jobs[0].orderNumber: must be a string\\x1b[31m | '),
    ).toBe(true);
    expect(text).not.toContain('\u001b');
    // Causes before consequences: the held-back line is not among the three.
    expect(text).not.toContain('held');
    expect(text).toContain('orders.yaml:4:3');
    expect(text).not.toContain('fourth');
    expect(text.length).toBeLessThan(3 * 300 + 100);
  });

  it('quotes a held-back error when it is all there is, and nothing when there is no error', () => {
    expect(firstErrors(reportWith([error('run.held-back', 'held back', 7)]), 'a.yaml')).toBe(
      '1 error: a.yaml:7:3: jobs[0].orderNumber: held back',
    );
    expect(firstErrors(reportWith([]), 'a.yaml')).toBeUndefined();
  });
});

describe('heldReasons', () => {
  const held = (reasons: string[], status = 'awaiting-approval') => ({
    status,
    errors: reasons.map((r, i) => error('approval.job-cost', `awaiting approval: ${r} (htorder approve)`, 10 + i)),
    warnings: [],
    items: [],
  });
  const report = (jobs: unknown[]) => ({ ...reportWith([]), jobs }) as unknown as ResultReport;

  it("quotes at most three of the waiting jobs' reasons, says how many there are, and skips the jobs held back", () => {
    const text = heldReasons(
      report([
        held(['estimate 610.00 USD is over maxJobCost 500.00 USD']),
        { ...held(['ignored']), status: 'not-submitted' },
        held(['suspected duplicate', 'estimate over maxDailyCost', 'fourth']),
      ]),
      'big.csv',
    );
    expect(text).toBe(
      'first 3 of 4 reasons: big.csv:10:3: jobs[0].orderNumber: awaiting approval: estimate 610.00 USD is over maxJobCost 500.00 USD (htorder approve) | ' +
        'big.csv:10:3: jobs[0].orderNumber: awaiting approval: suspected duplicate (htorder approve) | ' +
        'big.csv:11:3: jobs[0].orderNumber: awaiting approval: estimate over maxDailyCost (htorder approve)',
    );
    expect(heldReasons(report([held(['one'])]), 'a.csv')).toMatch(/^1 reason: a\.csv:10:3: /);
    expect(heldReasons(report([held(['x'], 'failed')]), 'a.csv')).toBeUndefined();
  });
});
