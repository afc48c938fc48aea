import { defineConfig } from 'vitest/config';

/** The long suites (chaos, fuzz): `npm run test:chaos`, `npm run test:fuzz`. */
export default defineConfig({
  test: {
    include: ['test/**/*.long.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    // A temporary folder per test file, removed after it, inside one per run, checked at its end;
    // then a fresh XDG_STATE_HOME per test: the default ledger is per user, never the tester's own.
    globalSetup: ['test/support/temp-root.global.ts'],
    setupFiles: ['test/support/temp-root.ts', 'test/support/isolated-state.ts'],
  },
});
