import { describe, expect, it } from 'vitest';
import { STAGE_OUTCOMES, type StageOutcome } from '../../src/pipeline/job-state.js';
import { blocksSubmission, jobStatus } from '../../src/pipeline/job-status.js';
import { JOB_STATUSES, type JobStatus } from '../../src/report/model.js';

/** The one table of what each stage outcome is reported as (docs/reports.md lists the statuses). */
const EXPECTED: Record<StageOutcome, JobStatus> = {
  checked: 'valid',
  ready: 'valid',
  refused: 'invalid',
  'awaiting-approval': 'awaiting-approval',
  'held-back': 'not-submitted',
  created: 'submitted',
  found: 'already-submitted',
  'not-created': 'failed',
  unknown: 'in-doubt',
  'not-processed': 'failed',
};

describe('jobStatus: a stage outcome → the status the report shows', () => {
  it.each(Object.entries(EXPECTED))('%s is reported %s', (outcome, status) => {
    expect(jobStatus(outcome as StageOutcome)).toBe(status);
  });

  it('covers every outcome, and every status but none other comes out of it', () => {
    expect([...STAGE_OUTCOMES].sort()).toEqual(Object.keys(EXPECTED).sort());
    const produced = new Set(STAGE_OUTCOMES.map(jobStatus));
    // `skipped` is no pipeline outcome: it is a row a mapping's skip rule left out, which never
    // becomes a job of the pipeline (report/build-report.ts writes it).
    expect([...produced].sort()).toEqual(JOB_STATUSES.filter((s) => s !== 'skipped').sort());
  });

  it('only an invalid, failed, in-doubt or awaiting-approval job holds the others back (all or nothing)', () => {
    const blocking = STAGE_OUTCOMES.filter(blocksSubmission).sort();
    expect(blocking).toEqual(['awaiting-approval', 'not-created', 'not-processed', 'refused', 'unknown']);
    for (const outcome of STAGE_OUTCOMES) {
      expect(blocksSubmission(outcome)).toBe(
        ['invalid', 'failed', 'in-doubt', 'awaiting-approval'].includes(jobStatus(outcome)),
      );
    }
  });
});
