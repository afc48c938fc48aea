import type { Command } from 'commander';
import {
  WATCH_SETTINGS,
  addConfigOptions,
  addSettingOptions,
  configFlagsFrom,
} from '../../core/config/config-flags.js';
import { WATCH_DEFAULTS } from '../../core/config/settings.js';
import { ExitCode } from '../../core/errors.js';
import { addSandboxOptions, examples, sandboxOptionsFrom } from '../help.js';

/** `htorder watch DIR | s3://BUCKET/PREFIX` — daemon: runs each manifest dropped in, exactly once. */
export function register(program: Command): void {
  const cmd = addSandboxOptions(
    program
      .command('watch')
      .description(
        'daemon: run each manifest dropped into a folder or an S3 prefix exactly once; reports beside it in done/ or failed/',
      )
      .argument('<target>', 'a drop folder, or s3://BUCKET/PREFIX')
      .option(
        '--mapping <preset|file>',
        'a mapping for CSV/xlsx exports: a file, or a preset (shopify, woocommerce, odoo, bigcommerce, etsy, squarespace, wix, amazon, ebay); per file: routes in the config file',
      )
      .option('--partial', 'submit the valid jobs even when other jobs of the manifest failed'),
  )
    .option('--ui', 'serve the read-only dashboard on --ui-port (docs/ui.md)')
    .option(
      '--replace-ledger',
      "mark the drop location as this watcher's ledger's although another ledger marked it (that ledger was moved or imported here, and none of its watchers runs)",
    )
    .addHelpText(
      'after',
      examples([
        [
          'htorder watch --sandbox ./drop',
          'try it: drop samples/csv/orders.csv into ./drop, see it move to ./drop/done/',
        ],
        [
          'htorder watch /srv/orders --health-port 9464',
          'a drop folder, with /healthz and /metrics (env HTORDER_HEALTH_PORT)',
        ],
        [
          'htorder watch s3://acme-orders/incoming/ --bucket-ledger s3://acme-orders/htorder-state/',
          'an S3 prefix; its ledger and claims where droppers cannot write (AWS credentials from the usual chain)',
        ],
      ]),
    );
  addSettingOptions(cmd, WATCH_SETTINGS, WATCH_DEFAULTS);
  addConfigOptions(cmd, WATCH_DEFAULTS);
  cmd.action(async (target: string, opts: Record<string, unknown>) => {
    // Loaded when the command runs: the daemon pulls in the AWS SDK and prom-client.
    const { runWatch } = await import('../../app/watch-daemon.js');
    const controller = new AbortController();
    let signals = 0;
    let stopped = false;
    const onStopped = (): boolean => (stopped = true);
    const onSignal = (sig: NodeJS.Signals): void => {
      signals += 1;
      // A second signal while finishing: the user insists. The ledger keeps jobs exactly
      // once and the input stays in processing/ to be resumed, so this is safe too. Once
      // stopped, nothing is cut short but the closing: the stop was graceful, and says so.
      if (signals > 1) process.exit(stopped ? ExitCode.Ok : sig === 'SIGINT' ? 130 : 143);
      controller.abort();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    try {
      process.exitCode = await runWatch(
        {
          target,
          mapping: opts.mapping as string | undefined,
          partial: opts.partial === true,
          ...sandboxOptionsFrom(opts),
          ui: opts.ui === true,
          replaceLedger: opts.replaceLedger === true,
          flags: configFlagsFrom(opts),
        },
        { stderr: process.stderr, env: process.env, cwd: process.cwd(), signal: controller.signal, onStopped },
      );
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  });
}
