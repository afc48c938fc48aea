import type { Command } from 'commander';

/** `htorder sandbox` — placeholder until its issue lands. */
export function register(program: Command): void {
  program.command('sandbox').description('(not yet implemented)').action(() => {
    process.stderr.write('htorder sandbox: not yet implemented\n');
    process.exitCode = 2;
  });
}
