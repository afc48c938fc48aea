import type { Command } from 'commander';
import {
  ARTWORK_SETTINGS,
  addConfigOptions,
  addSettingOptions,
  configFlagsFrom,
  GUARD_SETTINGS,
  RUN_NOTIFY_SETTINGS,
} from '../../core/config/config-flags.js';
import { processIo } from '../command-io.js';
import { addSandboxOptions, examples, sandboxOptionsFrom, type Example } from '../help.js';

interface PipelineCommandSpec {
  name: 'plan' | 'run';
  description: string;
  examples: readonly Example[];
}

const PLAN: PipelineCommandSpec = {
  name: 'plan',
  description: 'check, resolve, preflight and dry-run manifests against the API; estimates costs, creates nothing',
  examples: [
    [
      'htorder plan --sandbox samples/reorder/asset-reorder.yaml',
      'try it against the built-in simulator, no credentials needed',
    ],
    ['htorder plan orders.yaml', 'against the account configured by HTORDER_* (or --profile)'],
    ['htorder plan --json --mapping erp.yaml exports/*.csv', 'ERP exports; one JSON summary line on stdout'],
  ],
};

const RUN: PipelineCommandSpec = {
  name: 'run',
  description: 'plan, then submit every job exactly once (all or nothing per manifest unless --partial)',
  examples: [
    [
      'htorder run --sandbox samples/reorder/asset-reorder.yaml',
      'submit to the built-in simulator, no credentials needed',
    ],
    ['htorder run orders.yaml more.csv', 'against the account configured by HTORDER_* (or --profile); safe to repeat'],
    ['htorder run --partial --json orders.csv', 'submit the valid jobs even if others failed; JSON summary on stdout'],
    ['htorder run --mapping erp.yaml exports/*.csv', 'nightly ERP exports'],
  ],
};

/**
 * `htorder plan FILE...` and `htorder run FILE...`: the same inputs and flags (run adds
 * --partial and its notifications) and one driver (run-pipeline.ts).
 */
export function register(program: Command): void {
  for (const spec of [PLAN, RUN]) registerPipelineCommand(program, spec);
}

function registerPipelineCommand(program: Command, spec: PipelineCommandSpec): void {
  const cmd = program
    .command(spec.name)
    .description(spec.description)
    .argument('<files...>', 'YAML, JSON or CSV manifests')
    .option(
      '--mapping <preset|file>',
      'a mapping for CSV/xlsx exports: a file, or a preset (shopify, woocommerce, odoo, bigcommerce, etsy, squarespace, wix, amazon, ebay)',
    );
  if (spec.name === 'run') cmd.option('--partial', 'submit the valid jobs even when other jobs of the manifest failed');
  if (spec.name === 'plan')
    cmd.option('--out <file>', 'save the plan (what run would send now) for htorder apply (docs/guardrails.md)');
  cmd.option('--json', 'print a machine-readable summary to stdout');
  addSandboxOptions(cmd).addHelpText('after', examples(spec.examples));
  // The ledger's order locks: plan and run take them.
  addSettingOptions(cmd, ['lockStaleMs']);
  // The guardrails (docs/guardrails.md): plan shows what would wait, run holds it.
  addSettingOptions(cmd, GUARD_SETTINGS);
  // Artwork files and links (docs/artwork.md): plan checks them, run uploads and checks.
  addSettingOptions(cmd, ARTWORK_SETTINGS);
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
        ...(typeof opts.out === 'string' ? { out: opts.out } : {}),
        ...sandboxOptionsFrom(opts),
        flags: configFlagsFrom(opts),
      },
      processIo(),
    );
  });
}
