import { describe, expect, it } from 'vitest';
import { formatInputOutcome } from '../../src/cli/format-outcome.js';
import type { JobResult, JobStatus, ResultReport } from '../../src/report/model.js';

/** A report's job as the pipeline leaves it after a run (items without errors). */
function job(
  index: number,
  orderNumber: string,
  status: JobStatus,
  estimate: number | null,
  jobNumber: number | null,
  items: number,
): JobResult {
  return {
    index,
    orderNumber,
    status,
    source: { line: 3 + index, column: 5 },
    jobNumber,
    dateDue: null,
    totalJobCost: estimate,
    estimatedCost: estimate,
    warnings: [],
    errors: [],
    items: Array.from({ length: items }, (_, k) => ({
      index: k,
      source: null,
      itemType: 'Asset',
      code: 'A1',
      quantity: 1,
      status,
      newAssetSku: null,
      needsArtworkToBeUploaded: null,
      errors: [],
    })),
  };
}

function reportOf(jobs: JobResult[], summary: { errors: number; warnings: number }): ResultReport {
  return {
    reportVersion: 1,
    command: 'run',
    htorderVersion: '0.0.0',
    input: { file: '/in/orders.yaml', sha256: null, format: 'yaml' },
    startedAt: '2026-11-23T00:00:00.000Z',
    errors: [],
    warnings: [],
    summary: { jobs: jobs.length, items: 0, byStatus: { submitted: jobs.length }, ...summary },
    jobs,
  } as unknown as ResultReport;
}

describe('the outcome table on the terminal', () => {
  it("shows the jobs' errors and warnings the summary counts, compiler style", () => {
    const bad = job(0, 'PO-1', 'invalid', null, null, 1);
    const error = { code: 'x', message: 'broken', field: 'jobs[0].dateDue', source: { line: 4, column: 5 } };
    const warning = { code: 'w', message: 'careful', field: 'jobs[1].mustDate', source: { line: 9, column: 5 } };
    const warned = { ...job(1, 'PO-2', 'submitted', 1, 700001, 1), warnings: [warning] };
    const text = formatInputOutcome(
      {
        file: '/in/orders.yaml',
        status: 'invalid',
        report: reportOf([{ ...bad, errors: [error] }, warned], { errors: 1, warnings: 1 }),
        planned: new Map(),
      },
      'run',
    );
    expect(text).toContain('  /in/orders.yaml:4:5: jobs[0].dateDue: broken\n');
    expect(text).toContain('  warning: /in/orders.yaml:9:5: jobs[1].mustDate: careful\n');
  });

  it('pads each column to its widest cell, two spaces apart, with no trailing spaces', () => {
    const jobs = [
      job(0, 'PO-1', 'submitted', 12.5, 700001, 1),
      job(1, 'PO-LONGER-NUMBER', 'submitted', 1234.5, 700002, 12),
      job(2, 'P3', 'failed', null, null, 3),
    ];
    const report = reportOf(jobs, { errors: 0, warnings: 0 });
    const text = formatInputOutcome({ file: '/in/orders.yaml', status: 'invalid', report, planned: new Map() }, 'run');
    expect(text.split('\n').slice(0, 5)).toEqual([
      '/in/orders.yaml:',
      '  order             items  estimate  status     job',
      '  PO-1              1      12.50     submitted  700001',
      '  PO-LONGER-NUMBER  12     1234.50   submitted  700002',
      '  P3                3      -         failed     -',
    ]);
  });

  it('shows the first 50 jobs of a big input and points at result.csv for the rest; the total is of every job', () => {
    const jobs = Array.from({ length: 120 }, (_, i) => job(i, `PO-${i}`, 'submitted', 2, 700000 + i, 1));
    const report = reportOf(jobs, { errors: 0, warnings: 0 });
    const reports = { json: '/in/orders.yaml.result.json', csv: '/in/orders.yaml.result.csv' };
    const text = formatInputOutcome(
      { file: '/in/orders.yaml', status: 'ok', report, reports, planned: new Map() },
      'run',
    );
    const lines = text.split('\n');
    expect(lines.filter((l) => /^ {2}PO-\d+ /.test(l))).toHaveLength(50);
    expect(lines[51]).toBe('  PO-49  1      2.00      submitted  700049');
    expect(lines[52]).toBe('  ... and 70 more jobs: every job is in /in/orders.yaml.result.csv');
    expect(text).toContain('  estimated total: 240.00\n');
    expect(text).toContain('  120 jobs: 120 submitted\n');
  });
});
