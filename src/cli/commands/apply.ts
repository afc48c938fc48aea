import type { Command } from 'commander';
import {
  ARTWORK_SETTINGS,
  addConfigOptions,
  addSettingOptions,
  configFlagsFrom,
  GUARD_SETTINGS,
} from '../../core/config/config-flags.js';
import { parseAmount, parseInteger } from '../../core/config/parse-setting.js';
import { processIo } from '../command-io.js';
import { addSandboxOptions, examples, sandboxOptionsFrom } from '../help.js';

/** `htorder apply PLAN.json`: exactly the jobs `plan --out` saved, or nothing (docs/guardrails.md). */
export function register(program: Command): void {
  const cmd = program
    .command('apply')
    .description('submit exactly the jobs of a saved plan (htorder plan --out), or nothing if anything changed')
    .argument('<plan>', 'the plan file htorder plan --out wrote')
    .option('--tolerance <amount>', 'how much an estimate may have risen since the plan', '0')
    .option('--max-age <hours>', 'refuse a plan older than this many hours', '24')
    .option('--json', 'print a machine-readable summary to stdout');
  addSandboxOptions(cmd).addHelpText(
    'after',
    examples([
      ['htorder apply plan.json', 'send exactly what htorder plan orders.csv --out plan.json saved, once'],
      ['htorder apply --tolerance 5 plan.json', 'allow each estimate to have risen by up to 5.00'],
    ]),
  );
  addSettingOptions(cmd, GUARD_SETTINGS);
  addSettingOptions(cmd, ARTWORK_SETTINGS);
  addConfigOptions(cmd);
  cmd.action(async (plan: string, opts: Record<string, unknown>) => {
    const { runApply } = await import('../saved-plan-command.js');
    process.exitCode = await runApply(
      {
        plan,
        tolerance: parseAmount(opts.tolerance, '--tolerance', 1e12),
        maxAgeHours: parseInteger(opts.maxAge, '--max-age', 0, 24 * 366, 'a whole number of hours'),
        json: opts.json === true,
        ...sandboxOptionsFrom(opts),
        flags: configFlagsFrom(opts),
      },
      processIo(),
    );
  });
}
