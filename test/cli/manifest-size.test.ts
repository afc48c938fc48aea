import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { MAX_MANIFEST_BYTES } from '../../src/core/config/settings.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';

/** The size cap of YAML and JSON manifests is the setting manifestMaxBytes, bounded, in check, plan and run alike. */

const io = captureStdio();
let order: string;
const saved = { ...process.env };

beforeEach(() => {
  const dir = mkdtempSync(join(tmpdir(), 'htorder-size-'));
  order = join(dir, 'reorder.yaml');
  // The sample, made over 1 KiB by a comment.
  writeFileSync(
    order,
    `${readFileSync(join(ROOT, 'samples/reorder/asset-reorder.yaml'), 'utf8')}# ${'x'.repeat(1200)}\n`,
  );
  for (const k of Object.keys(process.env)) if (k.startsWith('HTORDER_')) delete process.env[k];
  return () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  };
});

describe('manifestMaxBytes', () => {
  it('check refuses a manifest over it, naming the setting; a larger cap reads it', async () => {
    const size = statSync(order).size;
    expect(size).toBeGreaterThan(1024);
    process.env.HTORDER_MANIFEST_MAX_BYTES = '1024';
    expect(await runCli(['check', order])).toBe(1);
    expect(io.err).toContain(
      `the file is ${size} bytes, over the 1024-byte limit for a YAML or JSON manifest (limit manifestMaxBytes`,
    );
    process.env.HTORDER_MANIFEST_MAX_BYTES = String(size);
    expect(await runCli(['check', order]), io.err).toBe(0);
  });

  it('plan and run read it through the same cap', async () => {
    process.env.HTORDER_MANIFEST_MAX_BYTES = '1024';
    expect(await runCli(['plan', '--sandbox', order])).toBe(1);
    expect(io.err).toContain('over the 1024-byte limit');
    const json = order.replace(/\.yaml$/, '.json');
    writeFileSync(json, JSON.stringify({ version: 1, jobs: [], padding: 'x'.repeat(2000) }));
    expect(await runCli(['run', '--sandbox', json])).toBe(1);
    expect(io.err).toContain('over the 1024-byte limit');
  });

  it('is bounded: 1 KiB to 256 MiB', async () => {
    process.env.HTORDER_MANIFEST_MAX_BYTES = String(MAX_MANIFEST_BYTES + 1);
    expect(await runCli(['check', order])).toBe(2);
    expect(io.err).toContain(`HTORDER_MANIFEST_MAX_BYTES must be a whole number from 1024 to ${MAX_MANIFEST_BYTES}`);
    process.env.HTORDER_MANIFEST_MAX_BYTES = '1023';
    expect(await runCli(['check', order])).toBe(2);
  });
});
