import type { Command } from 'commander';
import { processIo, type CommandIo } from '../command-io.js';
import { addConfigOptions, configFlagsFrom } from '../../core/config/config-flags.js';
import { notifyWebhooks } from '../../core/config/notify-config.js';
import type { ApiClient } from '../../api/client.js';
import type { Logger } from '../../core/log/logger.js';
import type { Targets } from '../../pipeline/track/targets.js';
import type { TrackOptions, TrackResult } from '../../pipeline/track/track.js';
import { ExitCode, UsageError } from '../../core/errors.js';
import { addSandboxOptions, examples, sandboxOptionsFrom } from '../help.js';
import { untilStopped } from '../stop-signals.js';
import { printable, printableLines } from '../../core/printable.js';

const MINUTE = 60_000;

/** `htorder track [REPORT | INPUT | DIR]...` — follows submitted jobs to despatch and writes their tracking into the reports. */
export function register(program: Command): void {
  const cmd = program
    .command('track')
    .description(
      'follow submitted jobs to despatch: status, dates, tracking numbers, invoice; written into each report',
    )
    .argument(
      '[paths...]',
      'result reports (X.result.json), inputs with a report, folders of reports, or a state dir (default: the ledger)',
    )
    .option('--include-closed', 'also follow closed jobs through /Jobs/active (includeClosedJobs)')
    .option('--details', 'read GET /Jobs/{n} for every job, not only where something changed')
    .option('--json', 'print the tracking as JSON to stdout (invoice links without their signature)')
    .option('--watch', 'check again every --interval minutes and print only what changed, until Ctrl-C')
    .option('--interval <minutes>', 'minutes between checks with --watch (minimum 1)', '15')
    .option(
      '--tracking-csv <file>',
      "write the despatched jobs' tracking for the shop to import into this one file, instead of X.tracking.csv beside each report",
    )
    .addHelpText(
      'after',
      examples([
        ['htorder track', 'every order in the ledger (HTORDER_STATE_DIR, default ~/.local/state/htorder)'],
        ['htorder track orders.yaml', 'the jobs in orders.yaml.result.json; their tracking is written into it'],
        ['htorder track --json orders.yaml.result.json more/', 'reports and folders of reports; JSON on stdout'],
        ['htorder track --watch --interval 30', 'check every 30 minutes and print only what changed, until Ctrl-C'],
        ['htorder track --sandbox', "the sandbox's jobs that `htorder run --sandbox` submitted"],
        [
          'htorder track --tracking-csv shipped.csv exports/',
          "every despatched job's tracking in one file for the shop",
        ],
      ]),
    );
  addSandboxOptions(cmd);
  addConfigOptions(cmd);
  cmd.action(async (paths: string[], opts: Record<string, unknown>) => {
    process.exitCode = await runTrack(paths, opts, processIo());
  });
}

export interface TrackIo extends CommandIo {
  /** Stops a --watch (tests); SIGINT/SIGTERM do it otherwise. */
  signal?: AbortSignal;
}

type TrackModule = typeof import('../../pipeline/track/track.js');
type TrackFormat = typeof import('../../pipeline/track/format.js');

/** What both ways of tracking (once, or every few minutes) share; `load` collects the targets afresh. */
interface TrackRun {
  client: ApiClient;
  logger: Logger;
  track: TrackModule;
  format: TrackFormat;
  load: () => Promise<Targets>;
  options: TrackOptions;
  json: boolean;
  io: TrackIo;
  /** After each check: tracking files for the shops, `dispatched` notifications; false when a tracking file could not be written. */
  after: (result: TrackResult) => Promise<boolean>;
}

export async function runTrack(paths: string[], opts: Record<string, unknown>, io: TrackIo): Promise<number> {
  const minutes = Number(opts.interval ?? 15);
  if (!Number.isFinite(minutes) || minutes < 1)
    throw new UsageError(`--interval must be a number of minutes >= 1, got "${String(opts.interval)}"`);
  // Loaded when the command runs, not for `htorder --help`: the client pulls in undici.
  const [{ openApiSession }, { accountKey }, { createCatalogue }, { collectTargets }, track, { openLedger }] =
    await Promise.all([
      import('../../app/api-session.js'),
      import('../../app/pipeline-context.js'),
      import('../../resolve/catalogue.js'),
      import('../../pipeline/track/targets.js'),
      import('../../pipeline/track/track.js'),
      import('../../app/ledger-store.js'),
    ]);
  const format = await import('../../pipeline/track/format.js');
  const session = await openApiSession({
    ...sandboxOptionsFrom(opts),
    flags: configFlagsFrom(opts),
    env: io.env,
    cwd: io.cwd,
    stderr: io.stderr,
  });
  const { client, config, logger } = session;
  const { ledger, where } = await openLedger(session, {
    staleMs: session.settings.get('lockStaleMs'),
    env: io.env,
    sandbox: opts.sandbox === true,
  }).catch(async (err: unknown) => {
    await session.close();
    throw err;
  });
  const catalogue = createCatalogue(client);
  // The ledger key, exactly as run computes it (region base URL + account id).
  const account = (): Promise<string> => accountKey(config, catalogue);
  const load = async (): Promise<Targets> => {
    const t = await collectTargets(paths, { stateDir: where, ledger, account });
    for (const p of t.problems) io.stderr.write(`htorder track: ${printable(p)}\n`);
    return t;
  };
  const options = {
    includeClosed: opts.includeClosed === true,
    details: opts.details === true,
    concurrency: config.concurrency,
    now: () => new Date(session.clock.now()),
  };
  const { shipToShop } = await import('../../pipeline/track/ship-to-shop.js');
  // Read before anything is asked: a broken webhook setting is a usage error (exit 2).
  const notifier =
    notifyWebhooks(session.settings).length > 0
      ? (await import('../../watch/notify/notifier.js')).notifierFor(session.settings, logger, 'track')
      : undefined;
  const file = typeof opts.trackingCsv === 'string' ? opts.trackingCsv : undefined;
  const after = async (result: TrackResult): Promise<boolean> => {
    const shipped = await shipToShop(result, {
      file,
      sendReceipt: session.settings.get('trackingSendReceipt'),
      deliveryOptions: () => catalogue.deliveryOptions(),
    });
    for (const path of shipped.written) io.stderr.write(`tracking for the shop: ${printable(path)}\n`);
    for (const { path, code } of shipped.unwritten)
      io.stderr.write(
        `htorder track: cannot write the tracking for the shop to ${printable(path)} (${code}): ` +
          'move what is at that name, or make its folder writable; the reports hold the tracking\n',
      );
    for (const record of shipped.dispatched) notifier?.dispatched(record);
    return shipped.unwritten.length === 0;
  };
  const run: TrackRun = { client, logger, track, format, load, options, json: opts.json === true, io, after };
  try {
    return opts.watch === true ? await trackEvery(run, minutes) : await trackNow(run);
  } finally {
    await notifier?.close();
    await session.close();
    await ledger.close?.();
  }
}

/** `--watch`: checks every `minutes` until Ctrl-C (or the io's signal); a failed check is reported and retried. */
async function trackEvery(run: TrackRun, minutes: number): Promise<number> {
  const { client, track, load, options, io } = run;
  const { signal, stop } = untilStopped(io.signal);
  try {
    await track.watchTracking(client, load, {
      ...options,
      intervalMs: minutes * MINUTE,
      signal,
      onCheck: async (result, first) => {
        print(run, result, first ? 'table' : 'changes');
        await run.after(result);
      },
      onError: (err) =>
        io.stderr.write(
          `htorder track: check failed, trying again in ${minutes} min: ${printable((err as Error).message)}\n`,
        ),
    });
  } finally {
    stop();
  }
  return ExitCode.Ok;
}

/** One check, its table or JSON printed; the exit code says whether every job could be followed. */
async function trackNow(run: TrackRun): Promise<number> {
  const { client, logger, track, load, options, io } = run;
  let result: TrackResult;
  try {
    const targets = await load();
    if (targets.targets.length === 0) {
      io.stderr.write('htorder track: no submitted jobs to follow\n');
      return targets.problems.length > 0 ? ExitCode.Usage : ExitCode.Ok;
    }
    result = await track.trackOnce(client, targets, options);
  } catch (err) {
    const { unavailableReason } = await import('../../api/errors.js');
    io.stderr.write(`htorder track: ${printable(unavailableReason(err))}\n`);
    return ExitCode.Unavailable;
  }
  logger.info({ jobs: result.jobs.length, reports: result.reportsWritten.length }, 'tracked');
  print(run, result, 'table');
  const shipped = await run.after(result);
  if (result.incomplete) return ExitCode.Unavailable;
  if (result.jobs.some((j) => j.tracking.problem !== null)) return ExitCode.Invalid;
  return shipped ? ExitCode.Ok : ExitCode.Usage;
}

function print({ format, json, io }: TrackRun, result: TrackResult, how: 'table' | 'changes'): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(format.jsonResult(result, how === 'changes'))}\n`);
    return;
  }
  io.stderr.write(
    printableLines(
      how === 'table' ? format.formatTable(result.jobs) : format.formatChanges(result.jobs, new Date(result.checkedAt)),
    ),
  );
}
