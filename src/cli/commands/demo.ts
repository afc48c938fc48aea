import type { Command } from 'commander';
import { runDemo } from '../demo.js';

/** `htorder demo [--out DIR]` — every sample end to end against an embedded sandbox (`npm run demo`). */
export function register(program: Command): void {
  program
    .command('demo')
    .description('run every sample through plan and run against an embedded sandbox, and show where the reports are')
    .option('--out <dir>', 'copy the samples here and write the reports next to them (default: a new temp folder)')
    .action(async (opts: { out?: string }) => {
      process.exitCode = await runDemo({ out: opts.out, stdout: process.stdout });
    });
}
