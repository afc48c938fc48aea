import type { Command } from 'commander';

/** `htorder demo` — placeholder until its issue lands. */
export function register(program: Command): void {
  program.command('demo').description('(not yet implemented)').action(() => {
    process.stderr.write('htorder demo: not yet implemented\n');
    process.exitCode = 2;
  });
}
