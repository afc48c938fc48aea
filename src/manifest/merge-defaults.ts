/**
 * `defaults` deep-merged into a job: mappings merge key by key, the job's value wins, and
 * anything else (lists, text, numbers) is replaced whole — a job's `items` never gets the
 * default's items appended.
 */
export function mergeDefaults(defaults: unknown, job: unknown): unknown {
  if (!isPlainObject(defaults) || !isPlainObject(job)) return job === undefined ? defaults : job;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) setOwn(out, key, value);
  for (const [key, value] of Object.entries(job)) {
    setOwn(
      out,
      key,
      key in out && isPlainObject(out[key]) && isPlainObject(value) ? mergeDefaults(out[key], value) : value,
    );
  }
  return out;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Assignment that treats `__proto__` as an ordinary key. Only that key needs defineProperty:
 * plain assignment of any other new key on a fresh object is the same own, enumerable, writable
 * property, and keeps the merged jobs of a big manifest on one shared shape instead of a
 * runtime call per key (`npm run bench`, a run's start-up).
 */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
