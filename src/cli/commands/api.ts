import type { Command } from 'commander';

/** `htorder api` — placeholder until its issue lands. */
export function register(program: Command): void {
  program.command('api').description('(not yet implemented)').action(() => {
    process.stderr.write('htorder api: not yet implemented\n');
    process.exitCode = 2;
  });
}
