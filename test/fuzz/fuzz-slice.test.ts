import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvCaseArb, runFuzz, runInvalidThroughRun, yamlCaseArb } from '../support/fuzz.js';

/**
 * A short, seeded slice of the bad-input fuzzing for every `npm test` (the long run is
 * `npm run test:fuzz`): generated and mutated YAML and CSV manifests through check's code.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'htorder-fuzz-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('fuzz slice: bad manifests never crash, always get located errors', () => {
  it('YAML', async () => {
    const t = await runFuzz({
      numRuns: Number(process.env.FUZZ_RUNS ?? 600),
      seed: Number(process.env.FUZZ_SEED ?? 101),
      dir,
      arb: yamlCaseArb,
    });
    console.log('fuzz slice yaml', t);
    expect(t.invalid).toBeGreaterThan(0);
    expect(t.valid).toBeGreaterThan(0);
  }, 120_000);

  it('CSV', async () => {
    const t = await runFuzz({
      numRuns: Number(process.env.FUZZ_RUNS ?? 600),
      seed: Number(process.env.FUZZ_SEED ?? 202),
      dir,
      arb: csvCaseArb,
    });
    console.log('fuzz slice csv', t);
    expect(t.invalid).toBeGreaterThan(0);
    expect(t.valid).toBeGreaterThan(0);
  }, 120_000);
});

describe('fuzz slice: invalid manifests through `run` against the sandbox', () => {
  it('exit 1, nothing created, no secret in logs (debug) or reports', async () => {
    const r = await runInvalidThroughRun({ numRuns: Number(process.env.FUZZ_RUN_CASES ?? 40), seed: 303, dir });
    console.log('fuzz slice run', r);
    expect(r.created).toBe(0);
    expect(r.exitCodes).toEqual({ 1: r.cases });
  }, 120_000);
});
