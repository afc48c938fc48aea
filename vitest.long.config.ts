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
    // in it, a home and a working directory of the file's own and a fresh XDG_STATE_HOME per
    // test: no test reads or writes the tester's own (checked at the end of the run).
    globalSetup: ['test/support/temp-root.global.ts', 'test/support/real-home.global.ts'],
    setupFiles: ['test/support/temp-root.ts', 'test/support/isolated-home.ts'],
  },
});
