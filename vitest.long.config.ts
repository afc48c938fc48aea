import { defineConfig } from 'vitest/config';

/** The long suites (chaos, fuzz): `npm run test:chaos`, `npm run test:fuzz`. */
export default defineConfig({
  test: {
    include: ['test/**/*.long.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    // A fresh XDG_STATE_HOME per test: the default ledger is per user, never the tester's own.
    setupFiles: ['test/support/isolated-state.ts'],
  },
});
