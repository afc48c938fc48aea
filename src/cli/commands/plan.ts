import type { Command } from 'commander';
import { registerPipelineCommand } from './pipeline-command.js';

/** `htorder plan FILE...` — check, resolve, preflight and dry-run manifests against the API; estimates costs, creates nothing. */
export function register(program: Command): void {
  registerPipelineCommand(program, {
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
  });
}
