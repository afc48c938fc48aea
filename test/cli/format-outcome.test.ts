import { describe, expect, it } from 'vitest';
import { formatInputOutcome } from '../../src/cli/format-outcome.js';
import { errorLines, warningLines } from '../../src/report/write-errors-txt.js';
import { seeded } from '../support/seeded-random.js';
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

  it("shows the first eight of the file's errors, the jobs', the file's warnings and the jobs', as errors.txt orders them", () => {
    const random = seeded(40);
    const pick = (n: number) => Math.floor(random() * n);
    const message = (kind: string, k: number) => ({
      code: kind,
      message: `${kind} ${k}`,
      field: null,
      source: { line: k + 1, column: 1 },
    });
    for (let round = 0; round < 200; round++) {
      const jobs = Array.from({ length: 1 + pick(12) }, (_, i) => ({
        ...job(i, `PO-${i}`, 'invalid', null, null, 1),
        errors: Array.from({ length: pick(3) }, (_, k) => message('e', i * 10 + k)),
        warnings: Array.from({ length: pick(3) }, (_, k) => message('w', i * 10 + k)),
      }));
      const report = {
        ...reportOf(jobs, { errors: 1, warnings: 1 }),
        errors: Array.from({ length: pick(4) }, (_, k) => message('file-e', k)),
        warnings: Array.from({ length: pick(4) }, (_, k) => message('file-w', k)),
      } as ResultReport;
      const text = formatInputOutcome(
        { file: '/in/orders.yaml', status: 'invalid', report, planned: new Map() },
        'run',
      );
      const all = [...errorLines(report, '/in/orders.yaml'), ...warningLines(report, '/in/orders.yaml')];
      const shown = text
        .split('\n')
        .filter((l) => /^ {2}(warning: )?\/in\/orders\.yaml:\d/.test(l))
        .map((l) => l.slice(2));
      expect(shown).toEqual(all.slice(0, 8));
      expect(text.includes('  ... more in the reports\n')).toBe(all.length > 8);
    }
  });

  it('reads each job of the report once (a spooled report reads each from disk)', () => {
    const jobs = Array.from({ length: 300 }, (_, i) =>
      job(i, `PO-${i}`, i % 7 ? 'submitted' : 'skipped', 2, 700000 + i, 1),
    );
    let reads = 0;
    const counted = new Proxy(jobs, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    const report = { ...reportOf(jobs, { errors: 0, warnings: 0 }), jobs: counted } as ResultReport;
    report.summary.byStatus = { submitted: 257, skipped: 43 } as ResultReport['summary']['byStatus'];
    const text = formatInputOutcome({ file: '/in/orders.yaml', status: 'ok', report, planned: new Map() }, 'run');
    expect(text).toContain('  estimated total: 600.00\n');
    expect(reads).toBe(300);
  });
});
