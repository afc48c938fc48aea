import type { Diagnostic } from '../../src/manifest/model.js';
import type { JobState, KeptResolution, StageOutcome } from '../../src/pipeline/job-state.js';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';

/** Where each job ends: refused, held back, awaiting approval, created, found, not created, not processed, in doubt. */
const ENDS: Exclude<StageOutcome, 'ready'>[] = [
  'refused',
  'held-back',
  'awaiting-approval',
  'created',
  'found',
  'not-created',
  'not-processed',
  'unknown',
];

/**
 * Mixed job outcomes of a run's report, as the pipeline writes them (report tests): `itemsOf(j)`
 * is how many items job `j` has; `next` a seeded random number generator.
 */
export function jobEnds(itemsOf: (j: number) => number) {
  /** The state after PLAN (ready, or an end) and, for a ready one, after its submit; diagnostics only grow. */
  function statesOf(j: number, next: () => number): JobState[] {
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
    const base = { index: j, orderNumber: `PO-${j}`, hash: 'h', unavailable: false };
    // Resolved (an estimate, a due date) or not: refused jobs often were not.
    const resolved: KeptResolution | undefined =
      next() < 0.7
        ? {
            kept: true,
            orderNumber: `PO-${j}`,
            jobIndex: j,
            request: 'r',
            content: 'c',
            estimate: { total: 10 + j / 4, currency: 'USD' },
            dateDue: next() < 0.5 ? '2026-03-12' : null,
          }
        : undefined;
    const planned: Diagnostic[] = [];
    if (next() < 0.3) planned.push({ severity: 'warning', code: 'w.test', message: `note ${j}`, field: `jobs[${j}]` });
    const ready = next() < 0.6;
    const end = pick(ENDS);
    if (!ready || end === 'refused') {
      // Ends unsent after PLAN: its only write.
      const outcome: Exclude<StageOutcome, 'ready'> = ready ? 'held-back' : (end as Exclude<StageOutcome, 'ready'>);
      const diagnostics = [...planned, ...findingsOf(j, outcome, next)];
      return [{ ...base, ...(resolved ? { resolved } : {}), outcome, diagnostics, ...ledgerOf(j, outcome, next) }];
    }
    const after = [...planned, ...findingsOf(j, end, next)];
    const sure = resolved ?? {
      kept: true as const,
      orderNumber: `PO-${j}`,
      jobIndex: j,
      request: 'r',
      content: 'c',
      estimate: {},
    };
    return [
      { ...base, resolved: sure, outcome: 'ready', diagnostics: planned },
      {
        ...base,
        resolved: sure,
        outcome: end as Exclude<StageOutcome, 'ready'>,
        diagnostics: after,
        ...ledgerOf(j, end, next),
      },
    ];
  }

  function findingsOf(j: number, end: StageOutcome, next: () => number): Diagnostic[] {
    const out: Diagnostic[] = [];
    if (end === 'refused' || end === 'not-created')
      out.push({
        severity: 'error',
        code: 'api.validation',
        message: `bad "quantity" =${j}, ü`,
        field: `jobs[${j}].items[${Math.floor(next() * itemsOf(j))}].quantity`,
      });
    if (end === 'held-back') out.push({ severity: 'error', code: 'run.held-back', message: 'another job failed' });
    if (end === 'awaiting-approval')
      out.push({ severity: 'error', code: 'approval.daily-cost', message: `over the day's cost ${j}` });
    if (end === 'not-processed' || end === 'unknown')
      out.push({ severity: 'error', code: 'api.unavailable', message: 'the API could not be reached' });
    return out;
  }

  function ledgerOf(j: number, end: StageOutcome, next: () => number): Pick<JobState, 'ledger'> {
    const settled = end === 'created' || end === 'found';
    if (!settled && end !== 'not-created' && end !== 'unknown') return {};
    const entry: LedgerEntry | undefined =
      end === 'unknown'
        ? undefined
        : {
            ledgerVersion: 1,
            account: 'us-demo',
            orderNumber: `PO-${j}`,
            payloadHash: 'h',
            state: settled ? 'submitted' : 'failed',
            attempts: 1,
            intentAt: '2026-03-01T10:00:01Z',
            ...(settled
              ? {
                  jobNumber: 700000 + j,
                  dateDue: '2026-03-09',
                  totalJobCost: 12.5 + j,
                  lines: Array.from({ length: itemsOf(j) }, (_, k) => ({
                    customerReference: null,
                    quantity: 10 + j,
                    // New asset SKUs and artwork awaited now and then; most lines neither.
                    newAssetSku: next() < 0.7 ? null : `=SKU,"${j}-${k}"`,
                    needsArtworkToBeUploaded: next() < 0.2,
                  })),
                }
              : {}),
          };
    return { ledger: { outcome: end, ...(entry ? { entry } : {}) } };
  }
  return { statesOf, ledgerOf };
}
