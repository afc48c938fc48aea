/**
 * `defaults` deep-merged into a job: mappings merge key by key, the job's value wins, and
 * anything else (lists, text, numbers) is replaced whole — a job's `items` never gets the
 * default's items appended. A key named `__proto__` is an ordinary key (Object.fromEntries).
 */
export function mergeDefaults(defaults: unknown, job: unknown): unknown {
  if (!isPlainObject(defaults) || !isPlainObject(job)) return job === undefined ? defaults : job;
  const merged = new Map(Object.entries(defaults));
  for (const [key, value] of Object.entries(job)) {
    const base = merged.get(key);
    merged.set(key, isPlainObject(base) && isPlainObject(value) ? mergeDefaults(base, value) : value);
  }
  return Object.fromEntries(merged);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
