/** The bounds of an exponential backoff: the first step, doubled each attempt, never above the cap. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/**
 * The one backoff of htorder (API retries, token refresh, the watcher's retries of an input,
 * waiting for a lock, webhook deliveries): exponential, with "equal jitter" — half the step
 * fixed, half random — so that retries of many processes spread out, yet none comes back at
 * once. `attempt` counts from 1; `random` returns 0 ≤ x < 1 (tests pass their own). Never
 * less than 1 ms.
 */
export function backoffDelay(attempt: number, bounds: Backoff, random: () => number = Math.random): number {
  const step = Math.min(bounds.maxMs, bounds.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.max(1, Math.floor(step / 2 + random() * (step / 2)));
}
