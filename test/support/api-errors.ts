import { expect } from 'vitest';
import { ApiError } from '../../src/api/errors.js';

/** The ApiError a call fails with; fails the test if it succeeds or throws anything else. */
export async function caught(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the call to fail');
}
