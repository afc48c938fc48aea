import type { Command } from 'commander';
import { registerPipelineCommand } from './pipeline-command.js';

/** `htorder run FILE...` — plan, then submit every job exactly once (all or nothing per manifest unless --partial). */
export function register(program: Command): void {
  registerPipelineCommand(program, {
    name: 'run',
    description: 'plan, then submit every job exactly once (all or nothing per manifest unless --partial)',
    partial: true,
    examples: [
      [
        'htorder run --sandbox samples/reorder/asset-reorder.yaml',
        'submit to the built-in simulator, no credentials needed',
      ],
      [
        'htorder run orders.yaml more.csv',
        'against the account configured by HTORDER_* (or --profile); safe to repeat',
      ],
      [
        'htorder run --partial --json orders.csv',
        'submit the valid jobs even if others failed; JSON summary on stdout',
      ],
      ['htorder run --mapping erp.yaml exports/*.csv', 'nightly ERP exports'],
    ],
  });
}
