import { Option, type Command } from 'commander';
import { addConfigOptions, configFlagsFrom } from '../../config/config-flags.js';
import { examples } from '../help.js';

/** `htorder run FILE...` — plan, then submit every job exactly once (all or nothing per manifest unless --partial). */
export function register(program: Command): void {
  const cmd = program
    .command('run')
    .description('plan, then submit every job exactly once (all or nothing per manifest unless --partial)')
    .argument('<files...>', 'YAML, JSON or CSV manifests')
    .option('--mapping <file>', 'ERP column mapping applied to CSV inputs')
    .option('--partial', 'submit the valid jobs even when other jobs of the manifest failed')
    .option('--json', 'print a machine-readable summary to stdout')
    .option('--sandbox', 'start an in-process sandbox and use its demo account (no credentials needed)')
    .option('--account <name>', 'sandbox demo account (with --sandbox; default us-demo)')
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (env HTORDER_LOG_LEVEL)'))
    .addHelpText('after', examples([
      ['htorder run --sandbox samples/reorder/asset-reorder.yaml', 'submit to the built-in simulator, no credentials needed'],
      ['htorder run orders.yaml more.csv', 'against the account configured by HTORDER_* (or --profile); safe to repeat'],
      ['htorder run --partial --json orders.csv', 'submit the valid jobs even if others failed; JSON summary on stdout'],
      ['htorder run --mapping erp.yaml exports/*.csv', 'nightly ERP exports'],
    ]));
  addConfigOptions(cmd);
  cmd.action(async (files: string[], opts: Record<string, unknown>) => {
    // Loaded when the command runs: the pipeline (ajv, undici, pino) is too heavy for --help.
    const { runPipelineCommand } = await import('../run-pipeline.js');
    process.exitCode = await runPipelineCommand(
      {
        command: 'run',
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
