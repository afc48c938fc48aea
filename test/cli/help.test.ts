import { describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../src/cli/program.js';
import { VERSION } from '../../src/core/version.js';
import { captureStdio } from '../support/capture-stdio.js';

const io = captureStdio();

const COMMANDS = buildProgram().commands.map((c) => c.name());

describe('htorder --help, --version and usage errors', () => {
  it('registers every documented command', () => {
    expect(COMMANDS).toEqual(
      expect.arrayContaining(['init', 'check', 'plan', 'run', 'track', 'watch', 'api', 'sandbox', 'demo']),
    );
  });

  it('--version prints the package version and exits 0', async () => {
    expect(await runCli(['--version'])).toBe(0);
    expect(io.out).toBe(`${VERSION}\n`);
  });

  it('--help lists the commands and ends with examples and the exit codes', async () => {
    expect(await runCli(['--help'])).toBe(0);
    for (const name of COMMANDS) expect(io.out).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(io.out).toContain('Examples:\n  $ htorder init my-orders');
    expect(io.out).toMatch(/Exit codes: 0 ok, 1 .*, 2 usage/);
  });

  it.each(COMMANDS)('htorder %s --help shows its examples and exits 0', async (name) => {
    expect(await runCli([name, '--help'])).toBe(0);
    expect(io.out).toContain(`Usage: htorder ${name}`);
    expect(io.out).toMatch(new RegExp(`Examples:\\n  \\$ htorder ${name}\\b`));
  });

  it.each(COMMANDS)('htorder %s with a misspelt flag exits 2 and suggests the right one', async (name) => {
    // Every command has --help; a misspelling of it must be caught with a suggestion.
    expect(await runCli([name, '--hepl'])).toBe(2);
    expect(io.err).toContain("error: unknown option '--hepl'");
    expect(io.err).toContain('(Did you mean --help?)');
  });

  it('suggests subcommand options, not only global ones', async () => {
    expect(await runCli(['plan', '--jsn', 'x.yaml'])).toBe(2);
    expect(io.err).toContain('(Did you mean --json?)');
    expect(await runCli(['watch', '--health-prot', '9464', 'drop'])).toBe(2);
    expect(io.err).toContain('(Did you mean --health-port?)');
  });

  it('an unknown command exits 2 with a suggestion', async () => {
    expect(await runCli(['chek', 'orders.yaml'])).toBe(2);
    expect(io.err).toContain('(Did you mean check?)');
  });

  it('a missing argument exits 2', async () => {
    expect(await runCli(['check'])).toBe(2);
    expect(io.err).toContain("missing required argument 'files'");
  });
});
