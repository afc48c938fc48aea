import type { Manifest } from '../model.js';
import { describeLocation, type Finding } from './rule.js';

/** orderNumber is the job's identity (the ledger key): two jobs may not share one. */
export function uniqueOrderNumber(manifest: Manifest): Finding[] {
  const first = new Map<string, number>();
  const findings: Finding[] = [];
  manifest.jobs.forEach((job, i) => {
    if (typeof job.orderNumber !== 'string' || job.orderNumber === '') return;
    const earlier = first.get(job.orderNumber);
    if (earlier === undefined) {
      first.set(job.orderNumber, i);
      return;
    }
    const here = manifest.sources.locate(`jobs[${i}].orderNumber`);
    const there = manifest.sources.locate(`jobs[${earlier}].orderNumber`);
    findings.push({
      code: 'order-number.duplicate',
      field: `jobs[${i}].orderNumber`,
      message: `orderNumber "${job.orderNumber}" is used twice: jobs[${earlier}] at ${describeLocation(there)} and jobs[${i}] at ${describeLocation(here)}; each job needs its own`,
    });
  });
  return findings;
}
