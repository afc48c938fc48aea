import type { Command } from 'commander';

/** `htorder check` — placeholder until its issue lands. */
export function register(program: Command): void {
  program.command('check').description('(not yet implemented)').action(() => {
    process.stderr.write('htorder check: not yet implemented\n');
    process.exitCode = 2;
  });
}
