import { defineConfig } from 'vitest/config';

/** The long suites (chaos, fuzz): `npm run test:chaos`, `npm run test:fuzz`. */
export default defineConfig({
  test: {
    include: ['test/**/*.long.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
