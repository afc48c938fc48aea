import { defineConfig } from 'vitest/config';

/** Benchmarks that share the tests' helpers (a PostgreSQL server, an S3 server): `npm run bench:fleet`. */
export default defineConfig({
  test: {
    include: ['bench/**/*.bench.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/support/temp-root.global.ts', 'test/support/real-home.global.ts'],
    setupFiles: ['test/support/temp-root.ts', 'test/support/isolated-home.ts'],
  },
});
