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
    // in it, a home and a working directory of the file's own and a fresh XDG_STATE_HOME per
    // test: no test reads or writes the tester's own (checked at the end of the run).
    globalSetup: ['test/support/temp-root.global.ts', 'test/support/real-home.global.ts'],
    setupFiles: ['test/support/temp-root.ts', 'test/support/isolated-home.ts'],
  },
});
