import type { JobRecord } from '../state.js';

/** GET /Jobs/active `searchText`, as docs/sandbox.md (Search) says: each word a prefix of a value or a word in it. */
function searchableValues(job: JobRecord): string[] {
  const values = [
    String(job.jobNumber),
    job.orderNumber,
    job.description,
    job.creator,
    job.deliveryMethod,
    job.deliveryLabel,
    job.location.name,
    job.location.code,
    ...job.lines.flatMap((l) => [l.assetSku, l.garment, l.gang, l.customerReference]),
  ].filter((v): v is string => typeof v === 'string' && v !== '');
  const out = new Set<string>();
  for (const v of values) {
    const lower = v.toLowerCase();
    out.add(lower);
    for (const w of lower.split(/\s+/)) if (w) out.add(w);
  }
  return [...out];
}

export function matchesSearch(job: JobRecord, searchText: string): boolean {
  const words = searchText.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const values = searchableValues(job);
  return words.every((w) => values.some((v) => v.startsWith(w)));
}
