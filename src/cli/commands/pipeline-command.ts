import type { Command } from 'commander';
import {
  addConfigOptions,
  addSettingOptions,
  configFlagsFrom,
  RUN_NOTIFY_SETTINGS,
} from '../../core/config/config-flags.js';
import { addSandboxOptions, examples, sandboxOptionsFrom, type Example } from '../help.js';

export interface PipelineCommandSpec {
  name: 'plan' | 'run';
  description: string;
  /** `run` only: submit the valid jobs even when others failed. */
  partial?: boolean;
  examples: readonly Example[];
}

/**
 * `plan` and `run` take the same inputs and flags (run adds --partial) and share one driver,
 * so they are declared once here.
 */
export function registerPipelineCommand(program: Command, spec: PipelineCommandSpec): void {
  const cmd = program
    .command(spec.name)
    .description(spec.description)
    .argument('<files...>', 'YAML, JSON or CSV manifests')
    .option(
      '--mapping <preset|file>',
      'a mapping for CSV/xlsx exports: a file, or a preset (shopify, woocommerce, odoo)',
    );
  if (spec.partial) cmd.option('--partial', 'submit the valid jobs even when other jobs of the manifest failed');
  cmd.option('--json', 'print a machine-readable summary to stdout');
  addSandboxOptions(cmd).addHelpText('after', examples(spec.examples));
  // The ledger's order locks: plan and run take them.
  addSettingOptions(cmd, ['lockStaleMs']);
  // run tells webhooks of failures (docs/notifications.md); plan sends nothing.
  if (spec.name === 'run') addSettingOptions(cmd, RUN_NOTIFY_SETTINGS);
  addConfigOptions(cmd);
  cmd.action(async (files: string[], opts: Record<string, unknown>) => {
    // Loaded when the command runs: the pipeline (ajv, undici) is too heavy for --help.
    const { runPipelineCommand } = await import('../run-pipeline.js');
    process.exitCode = await runPipelineCommand(
      {
        command: spec.name,
        files,
        mapping: opts.mapping as string | undefined,
        partial: opts.partial === true,
        json: opts.json === true,
        ...sandboxOptionsFrom(opts),
        flags: configFlagsFrom(opts),
      },
      { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() },
    );
  });
}
