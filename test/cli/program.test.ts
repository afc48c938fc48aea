import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';

describe('htorder CLI', () => {
  it('exits 2 on an unknown command', async () => {
    expect(await runCli(['no-such-command'])).toBe(2);
  });
});
