import type { Command } from 'commander';
import { examples } from '../help.js';

/**
 * `htorder check FILE... [--mapping FILE] [--json]` — parse, schema check and local rules;
 * no network. The implementation (ajv, the readers, the report writers) is imported when
 * the command runs, so `htorder --help` and the other commands do not pay for it.
 */
export function register(program: Command): void {
  program
    .command('check')
    .description('check manifests offline (syntax, schema, local rules) and write reports next to each input')
    .argument('<files...>', 'YAML, JSON or CSV manifests')
    .option(
      '--mapping <preset|file>',
      'a mapping for CSV/xlsx exports: a file, or a preset (shopify, woocommerce, odoo, bigcommerce, etsy, squarespace, wix, amazon, ebay)',
    )
    .option('--json', 'print a machine-readable summary to stdout')
    .addHelpText(
      'after',
      examples([
        [
          'htorder check orders.yaml',
          'writes orders.yaml.result.json, .result.csv (and .errors.txt when something is wrong)',
        ],
        ['htorder check orders.yaml more.csv', 'several inputs; exit 1 if any is invalid'],
        ['htorder check --mapping samples/erp/mapping.yaml samples/erp/export.csv', 'an ERP export in its own columns'],
        ['htorder check --json orders.csv', 'one JSON summary line on stdout'],
      ]),
    )
    .action(async (files: string[], opts: { mapping?: string; json?: boolean }) => {
      const { runCheckCommand } = await import('../check-command.js');
      process.exitCode = await runCheckCommand(files, opts);
    });
}
