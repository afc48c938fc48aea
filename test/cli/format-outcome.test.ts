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

describe('the outcome table on the terminal', () => {
  it('pads each column to its widest cell, two spaces apart, with no trailing spaces', () => {
    const jobs = [
      job(0, 'PO-1', 'submitted', 12.5, 700001, 1),
      job(1, 'PO-LONGER-NUMBER', 'submitted', 1234.5, 700002, 12),
      job(2, 'P3', 'failed', null, null, 3),
    ];
    const report = {
      reportVersion: 1,
      command: 'run',
      htorderVersion: '0.0.0',
      input: { file: '/in/orders.yaml', sha256: null, format: 'yaml' },
      startedAt: '2026-11-23T00:00:00.000Z',
      errors: [],
      warnings: [],
      summary: { jobs: 3, items: 16, errors: 0, warnings: 0, byStatus: { submitted: 2, failed: 1 } },
      jobs,
    } as unknown as ResultReport;
    const text = formatInputOutcome({ file: '/in/orders.yaml', status: 'invalid', report, resolved: new Map() }, 'run');
    expect(text.split('\n').slice(0, 5)).toEqual([
      '/in/orders.yaml:',
      '  order             items  estimate  status     job',
      '  PO-1              1      12.50     submitted  700001',
      '  PO-LONGER-NUMBER  12     1234.50   submitted  700002',
      '  P3                3      -         failed     -',
    ]);
  });
});
