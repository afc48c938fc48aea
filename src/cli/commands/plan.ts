import { Option, type Command } from 'commander';
import { addConfigOptions, configFlagsFrom } from '../../config/config-flags.js';
import { examples } from '../help.js';

/** `htorder plan FILE...` — check, resolve, preflight and dry-run manifests against the API; estimates costs, creates nothing. */
export function register(program: Command): void {
  const cmd = program
    .command('plan')
    .description('check, resolve, preflight and dry-run manifests against the API; estimates costs, creates nothing')
    .argument('<files...>', 'YAML, JSON or CSV manifests')
    .option('--mapping <file>', 'ERP column mapping applied to CSV inputs')
    .option('--json', 'print a machine-readable summary to stdout')
    .option('--sandbox', 'start an in-process sandbox and use its demo account (no credentials needed)')
    .option('--account <name>', 'sandbox demo account (with --sandbox; default us-demo)')
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (env HTORDER_LOG_LEVEL)'))
    .addHelpText('after', examples([
      ['htorder plan --sandbox samples/reorder/asset-reorder.yaml', 'try it against the built-in simulator, no credentials needed'],
      ['htorder plan orders.yaml', 'against the account configured by HTORDER_* (or --profile)'],
      ['htorder plan --json --mapping erp.yaml exports/*.csv', 'ERP exports; one JSON summary line on stdout'],
    ]));
  addConfigOptions(cmd);
  cmd.action(async (files: string[], opts: Record<string, unknown>) => {
    // Loaded when the command runs: the pipeline (ajv, undici, pino) is too heavy for --help.
    const { runPipelineCommand } = await import('../run-pipeline.js');
    process.exitCode = await runPipelineCommand(
      {
        command: 'plan',
        files,
        mapping: opts.mapping as string | undefined,
        partial: opts.partial === true,
        json: opts.json === true,
        sandbox: opts.sandbox === true,
        account: opts.account as string | undefined,
        logLevel: opts.logLevel as string | undefined,
        flags: configFlagsFrom(opts),
      },
      { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() },
    );
  });
}
