import { appendFile, cp } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireDist } from '../support/dist.js';
import { formatSummary, type NightFigures, playNights, type Recipe } from '../support/nights.js';
import { cronRecipe, watchRecipe } from '../support/nights-recipes.js';
import { tempDir } from '../support/temp-files.js';

/**
 * Night after night through each documented recipe (test/support/nights.ts says what happens
 * each night and what must hold): `npm run test:nights` (7 nights, in CI) and `npm run soak`
 * (30 nights; NIGHTS=365 for a year). NIGHTS_SEED varies the shop's orders, NIGHTS_RECIPES
 * picks recipes (cron,watch), NIGHTS_FIGURES names a file the figures are appended to (JSON lines),
 * NIGHTS_KEEP=DIR copies a failed run's folder there (the watchers' logs are in its logs/).
 * The container recipe runs in .ci/image-test.sh (npm test never needs a container engine).
 */

const NIGHTS = Number(process.env.NIGHTS ?? 7);
const SEED = Number(process.env.NIGHTS_SEED ?? 1);
const RECIPES: Record<string, (root: string) => Promise<Recipe>> = { cron: cronRecipe, watch: watchRecipe };
const chosen = (process.env.NIGHTS_RECIPES ?? 'cron,watch').split(',').filter(Boolean);

describe.each(chosen)('%s, night after night', (name) => {
  it(
    `${NIGHTS} nights: 0 duplicates, 0 lost, 0 wrong holds, every re-send held, no report read, every approval taken up`,
    async () => {
      requireDist();
      const make = RECIPES[name];
      if (!make) throw new Error(`no recipe "${name}" (known: ${Object.keys(RECIPES).join(', ')})`);
      const dir = await tempDir(`htorder-nights-${name}-`);
      const recipe = await make(dir.path);
      const figures: NightFigures[] = [];
      let passed = false;
      try {
        const log = (line: string): void => void process.stdout.write(`${line}\n`);
        figures.push(...(await playNights(recipe, { nights: NIGHTS, seed: SEED, log })).figures);
        process.stdout.write(`${formatSummary(figures)}\n`);
        passed = true;
      } finally {
        await recipe.close();
        if (!passed && process.env.NIGHTS_KEEP) {
          const kept = join(process.env.NIGHTS_KEEP, `${name}-${Date.now()}`);
          await cp(dir.path, kept, { recursive: true });
          process.stdout.write(`the failed run's folder is copied to ${kept}\n`);
        }
        await dir.remove();
        if (process.env.NIGHTS_FIGURES)
          await appendFile(process.env.NIGHTS_FIGURES, figures.map((f) => `${JSON.stringify(f)}\n`).join(''));
      }
      expect(figures).toHaveLength(NIGHTS + 1);
    },
    NIGHTS * 120_000 + 120_000,
  );
});
