import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Long-running suites (chaos, fuzz) opt in through their own npm scripts.
    exclude: ['test/**/*.long.test.ts', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // A temporary folder per test file, removed after it, inside one per run, checked at its end;
    // then a fresh XDG_STATE_HOME per test: the default ledger is per user, never the tester's own.
    globalSetup: ['test/support/temp-root.global.ts'],
    setupFiles: ['test/support/temp-root.ts', 'test/support/isolated-state.ts'],
  },
});
