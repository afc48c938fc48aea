import type { Command } from 'commander';
import { examples } from '../help.js';

/** `htorder demo [--out DIR]` — every sample end to end against an embedded sandbox (`npm run demo`). */
export function register(program: Command): void {
  program
    .command('demo')
    .description('run every sample through plan and run against an embedded sandbox, and show where the reports are')
    .option('--out <dir>', 'copy the samples here and write the reports next to them (default: a new temp folder)')
    .addHelpText(
      'after',
      examples([
        ['htorder demo', 'the samples in a new temp folder'],
        ['htorder demo --out ./htorder-demo', 'keep the copies and their reports where you can read them'],
      ]),
    )
    .action(async (opts: { out?: string }) => {
      const { runDemo } = await import('../demo.js');
      process.exitCode = await runDemo({ out: opts.out, stdout: process.stdout });
    });
}
