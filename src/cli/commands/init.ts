import { join } from 'node:path';
import type { Command } from 'commander';
import { ExitCode } from '../../core/errors.js';
import { examples } from '../help.js';

/** `htorder init [DIR] [--force]` — a starter manifest, a CSV template and a mapping skeleton. */
export function register(program: Command): void {
  program
    .command('init')
    .description(
      'write a starter manifest (orders.yaml), a CSV template, an ERP mapping skeleton and the schemas for editor completion',
    )
    .argument('[dir]', 'folder to write into (created if missing)', '.')
    .option('--force', 'replace files that already exist (otherwise nothing is written and the exit code is 2)')
    .addHelpText(
      'after',
      examples([
        ['htorder init', 'in the current folder'],
        [
          'htorder init my-orders && cd my-orders && htorder plan --sandbox orders.yaml',
          'a new folder; a first plan against the simulator',
        ],
        ['htorder init --force', 'refresh the files (e.g. the schemas after an upgrade); your edits to them are lost'],
      ]),
    )
    .action(async (dir: string, opts: { force?: boolean }) => {
      const { initProject, nextSteps } = await import('../init/init-project.js');
      // Paths stay as the user wrote DIR, so messages name files the way they were asked for.
      const { written } = await initProject({ dir, force: opts.force === true });
      for (const f of written) process.stderr.write(`wrote ${join(dir, f)}\n`);
      process.stderr.write(nextSteps(dir, process.cwd()));
      process.exitCode = ExitCode.Ok;
    });
}
