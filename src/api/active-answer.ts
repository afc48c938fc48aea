/**
 * Why an answer of GET /Jobs/active cannot be used, or null when it can. The search that
 * settles an order in doubt reads it: a job without a usable job number or order number would
 * be recorded as the order's job (or missed, and the order sent again), so such an answer is
 * refused whole rather than read in part.
 */
export function activeJobsFault(body: unknown): string | null {
  if (!isRecord(body)) return `the envelope is ${shown(body)}, not an object`;
  if (!Array.isArray(body.items)) return `items is ${shown(body.items)}, not a list of jobs`;
  for (const [i, item] of body.items.entries()) {
    const why = jobFault(item);
    if (why !== null) return `item ${i + 1} of the page: ${why}`;
  }
  return null;
}

/**
 * Why an answer of GET /Jobs/{n} cannot be used as job `asked`, or null when it can: not a job
 * (a gateway's page), another job, or without the lists every reader of a job goes through.
 */
export function jobAnswerFault(body: unknown, asked: number): string | null {
  if (!isRecord(body)) return `${shown(body)} is not a job`;
  if (body.jobNumber !== asked) return `jobNumber ${shown(body.jobNumber)} is not the job asked for`;
  for (const list of ['lines', 'shippingAddresses'])
    if (!Array.isArray(body[list])) return `${list} is ${shown(body[list])}, not a list`;
  return null;
}

function jobFault(item: unknown): string | null {
  if (!isRecord(item)) return `${shown(item)} is not a job`;
  const n = item.jobNumber;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return `jobNumber ${shown(n)} is not a job number`;
  const o = item.orderNumber;
  if (o !== null && typeof o !== 'string') return `orderNumber ${shown(o)} of job ${n} is not text or null`;
  return null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A value as the answer had it, short: `"70001"`, `null`, `missing`. */
function shown(v: unknown): string {
  if (v === undefined) return 'missing';
  if (Array.isArray(v)) return 'an array';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
