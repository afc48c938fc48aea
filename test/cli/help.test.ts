import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildProgram, runCli } from '../../src/cli/program.js';
import { VERSION } from '../../src/version.js';

let out = '';
let err = '';
beforeEach(() => {
  out = '';
  err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

const COMMANDS = buildProgram().commands.map((c) => c.name());

describe('htorder --help, --version and usage errors', () => {
  it('registers every documented command', () => {
    expect(COMMANDS).toEqual(expect.arrayContaining(['init', 'check', 'plan', 'run', 'track', 'watch', 'api', 'sandbox', 'demo']));
  });

  it('--version prints the package version and exits 0', async () => {
    expect(await runCli(['--version'])).toBe(0);
    expect(out).toBe(`${VERSION}\n`);
  });

  it('--help lists the commands and ends with examples and the exit codes', async () => {
    expect(await runCli(['--help'])).toBe(0);
    for (const name of COMMANDS) expect(out).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(out).toContain('Examples:\n  $ htorder init my-orders');
    expect(out).toMatch(/Exit codes: 0 ok, 1 .*, 2 usage/);
  });

  it.each(COMMANDS)('htorder %s --help shows its examples and exits 0', async (name) => {
    expect(await runCli([name, '--help'])).toBe(0);
    expect(out).toContain(`Usage: htorder ${name}`);
    expect(out).toMatch(new RegExp(`Examples:\\n  \\$ htorder ${name}\\b`));
  });

  it.each(COMMANDS)('htorder %s with a misspelt flag exits 2 and suggests the right one', async (name) => {
    // Every command has --help; a misspelling of it must be caught with a suggestion.
    expect(await runCli([name, '--hepl'])).toBe(2);
    expect(err).toContain("error: unknown option '--hepl'");
    expect(err).toContain('(Did you mean --help?)');
  });

  it('suggests subcommand options, not only global ones', async () => {
    expect(await runCli(['plan', '--jsn', 'x.yaml'])).toBe(2);
    expect(err).toContain('(Did you mean --json?)');
    expect(await runCli(['watch', '--health-prot', '9464', 'drop'])).toBe(2);
    expect(err).toContain('(Did you mean --health-port?)');
  });

  it('an unknown command exits 2 with a suggestion', async () => {
    expect(await runCli(['chek', 'orders.yaml'])).toBe(2);
    expect(err).toContain('(Did you mean check?)');
  });

  it('a missing argument exits 2', async () => {
    expect(await runCli(['check'])).toBe(2);
    expect(err).toContain("missing required argument 'files'");
  });
});
