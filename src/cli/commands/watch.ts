import { Option, type Command } from 'commander';
import { addConfigOptions, configFlagsFrom } from '../../config/config-flags.js';
import { UsageError } from '../../errors.js';
import { examples } from '../help.js';

/** `htorder watch DIR | s3://BUCKET/PREFIX` — daemon: runs each manifest dropped in, exactly once. */
export function register(program: Command): void {
  const cmd = program
    .command('watch')
    .description('daemon: run each manifest dropped into a folder or an S3 prefix exactly once; reports beside it in done/ or failed/')
    .argument('<target>', 'a drop folder, or s3://BUCKET/PREFIX')
    .option('--mapping <file>', 'ERP column mapping applied to CSV inputs')
    .option('--partial', 'submit the valid jobs even when other jobs of the manifest failed')
    .option('--sandbox', 'start an in-process sandbox and use its demo account (no credentials needed)')
    .option('--account <name>', 'sandbox demo account (with --sandbox; default us-demo)')
    .option('--scan-interval <ms>', 'how often the drop location is scanned (default 2000)')
    .option('--stable-time <ms>', 'a file unchanged this long is complete (default 2000; folders only)')
    .option('--lease <ms>', "claims and bucket locks not renewed this long are a crashed instance's (default 30000)")
    .option('--retry-min <ms>', 'first retry delay when the API is unavailable (default 5000; doubles up to --retry-max)')
    .option('--retry-max <ms>', 'longest retry delay (default 300000)')
    .option('--processing-dir <name>', 'name of the claimed-inputs folder/prefix (default processing)')
    .option('--done-dir <name>', 'name of the finished-inputs folder/prefix (default done)')
    .option('--failed-dir <name>', 'name of the failed-inputs folder/prefix (default failed)')
    .option('--s3-endpoint <url>', 'S3-compatible endpoint, e.g. MinIO, R2, Ceph (env HTORDER_S3_ENDPOINT)')
    .option('--s3-region <region>', 'bucket region (env HTORDER_S3_REGION, AWS_REGION)')
    .option('--s3-force-path-style', 'path-style bucket addressing (env HTORDER_S3_FORCE_PATH_STYLE=1)')
    .option('--single-instance', 'allow a store without conditional writes; then run exactly ONE watcher on the prefix')
    .option('--no-fs-events', 'do not watch file-system events; rely on the periodic scan alone')
    // From the environment too, so a container image can set them once for its HEALTHCHECK.
    .addOption(new Option('--health-port <port>', 'serve /healthz and Prometheus /metrics on this port').env('HTORDER_HEALTH_PORT'))
    .addOption(new Option('--health-host <host>', 'address for --health-port (default 127.0.0.1; 0.0.0.0 in containers)').env('HTORDER_HEALTH_HOST'))
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (env HTORDER_LOG_LEVEL; default info)'))
    .addHelpText('after', examples([
      ['htorder watch --sandbox ./drop', 'try it: drop samples/csv/orders.csv into ./drop, see it move to ./drop/done/'],
      ['htorder watch /srv/orders --health-port 9464', 'a drop folder, with /healthz and /metrics (env HTORDER_HEALTH_PORT)'],
      ['htorder watch s3://acme-orders/incoming/', 'an S3 prefix (AWS credentials from the usual chain)'],
    ]));
  addConfigOptions(cmd);
  cmd.action(async (target: string, opts: Record<string, unknown>) => {
    // Loaded when the command runs: the daemon pulls in the AWS SDK, chokidar and prom-client.
    const { runWatch } = await import('../../app/watch-daemon.js');
    const controller = new AbortController();
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals): void => {
      signals += 1;
      // A second signal while finishing: the user insists. The ledger keeps jobs exactly
      // once and the input stays in processing/ to be resumed, so this is safe too.
      if (signals > 1) process.exit(sig === 'SIGINT' ? 130 : 143);
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
          sandbox: opts.sandbox === true,
          account: opts.account as string | undefined,
          logLevel: opts.logLevel as string | undefined,
          flags: configFlagsFrom(opts),
          scanIntervalMs: ms(opts, 'scanInterval', '--scan-interval'),
          stableMs: ms(opts, 'stableTime', '--stable-time'),
          leaseMs: ms(opts, 'lease', '--lease'),
          retryMinMs: ms(opts, 'retryMin', '--retry-min'),
          retryMaxMs: ms(opts, 'retryMax', '--retry-max'),
          layout: {
            ...(opts.processingDir ? { processing: String(opts.processingDir) } : {}),
            ...(opts.doneDir ? { done: String(opts.doneDir) } : {}),
            ...(opts.failedDir ? { failed: String(opts.failedDir) } : {}),
          },
          s3Endpoint: opts.s3Endpoint as string | undefined,
          s3Region: opts.s3Region as string | undefined,
          s3ForcePathStyle: opts.s3ForcePathStyle === true,
          singleInstance: opts.singleInstance === true,
          healthPort: port(opts.healthPort),
          healthHost: opts.healthHost as string | undefined,
          fsEvents: opts.fsEvents !== false,
        },
        { stderr: process.stderr, env: process.env, cwd: process.cwd(), signal: controller.signal },
      );
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  });
}

/** `--health-port` / HTORDER_HEALTH_PORT: 0 picks a free port (tests), else 1–65535. */
function port(v: unknown): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--health-port (or HTORDER_HEALTH_PORT) must be a port number from 0 to 65535, got "${String(v)}"`);
  return n;
}

function ms(opts: Record<string, unknown>, key: string, flag: string): number | undefined {
  const v = opts[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a whole number >= 0, got "${String(v)}"`);
  return n;
}
