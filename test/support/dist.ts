import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Root of the built package. Tests that spawn real htorder processes run the built code. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** `npm test` builds first (pretest); a bare `vitest run` without a build fails loudly here. */
export function requireDist(): void {
  if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` (npm test does it for you)');
}
