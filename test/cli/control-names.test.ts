import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { captureStdio } from '../support/capture-stdio.js';
import { ROOT } from '../support/dist.js';
import { tempDirPerTest } from '../support/temp-files.js';

/**
 * An input whose file name holds a line feed (or another control character): every line of the
 * summary names it escaped (core/printable.ts), so the name cannot start a line of its own,
 * as in `reports:`, which lists its report files.
 */
const io = captureStdio();

describe('an input named with a line feed', () => {
  it.each([
    ['check', []],
    ['run', ['--sandbox']],
  ])('%s shows its name and its reports escaped, one line each', async (command, flags) => {
    const dir = await tempDirPerTest('htorder-names-');
    const file = join(dir, 'a\nb\u001b[31m.yaml');
    await copyFile(join(ROOT, 'samples/reorder/asset-reorder.yaml'), file);
    expect(await runCli([command, ...flags, file]), io.err).toBe(0);
    const shown = io.out + io.err;
    const escaped = join(dir, 'a\\x0ab\\x1b[31m.yaml');
    expect(shown).toContain(`  reports: ${escaped}.result.json, ${escaped}.result.csv\n`);
    expect(shown).toContain(`${escaped}:`);
    expect(shown).not.toContain('\u001b');
    for (const line of shown.split('\n')) expect(line).not.toMatch(/^b/);
  });
});
