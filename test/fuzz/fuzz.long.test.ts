import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvCaseArb, runFuzz, runInvalidThroughRun, yamlCaseArb, type FuzzTally } from '../support/fuzz.js';

/**
 * The long bad-input suite (`npm run test:fuzz`, issue 7): over 10,000 generated and mutated
 * manifests through check's code, and a few hundred invalid ones end to end through `run`
 * against the sandbox. FUZZ_SEED varies the run; FUZZ_CASES sets the in-process count per
 * format.
 */

const seed = Number(process.env.FUZZ_SEED ?? 20261);
const perFormat = Number(process.env.FUZZ_CASES ?? 5200);
const tallies: Record<string, FuzzTally | object> = {};
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'htorder-fuzz-long-'));
});
afterAll(async () => {
  console.log(`\nfuzz, seed ${seed}\n${JSON.stringify(tallies, null, 2)}\n`);
  if (process.env.FUZZ_TABLE) await writeFile(process.env.FUZZ_TABLE, JSON.stringify(tallies, null, 2));
  await rm(dir, { recursive: true, force: true });
});

describe('fuzz: bad manifests never crash or hang, always get located errors', () => {
  it(`YAML: ${perFormat} cases`, async () => {
    const t = await runFuzz({ numRuns: perFormat, seed, dir, arb: yamlCaseArb });
    tallies.yaml = t;
    expect(t.cases).toBe(perFormat);
  });

  it(`CSV: ${perFormat} cases`, async () => {
    const t = await runFuzz({ numRuns: perFormat, seed: seed + 1, dir, arb: csvCaseArb });
    tallies.csv = t;
    expect(t.cases).toBe(perFormat);
  });

  it('invalid manifests through `run`: exit 1, nothing created, no secret', async () => {
    const t0 = Date.now();
    const r = await runInvalidThroughRun({ numRuns: Number(process.env.FUZZ_RUN_CASES ?? 300), seed: seed + 2, dir });
    tallies.run = { ...r, seconds: (Date.now() - t0) / 1000 };
    expect(r.created).toBe(0);
    expect(r.exitCodes).toEqual({ 1: r.cases });
  });
});
