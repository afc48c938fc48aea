import { expect } from 'vitest';
import { UsageError } from '../../src/core/errors.js';

/** The message of the UsageError (exit 2) that `fn` throws; fails the test if it throws anything else or nothing. */
export function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}
