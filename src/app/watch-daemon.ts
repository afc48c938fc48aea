import { join, resolve } from 'node:path';
import { awsCredentials } from '../core/config/aws-credentials.js';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import type { SettingFlags } from '../core/config/resolve-settings.js';
import { MAX_CONCURRENCY, SETTINGS, WATCH_DEFAULTS } from '../core/config/settings.js';
import { ExitCode, UsageError } from '../core/errors.js';
import { FolderLedger } from '../storage/ledger/folder-ledger.js';
import { instrumentApi } from '../watch/api-instrumentation.js';
import { startHealthServer, type HealthServer } from '../watch/health-server.js';
import { cannotListen, isListenError } from '../core/limited-server.js';
import { WatchEvents } from '../watch/events.js';
import type { WatchMetrics } from '../watch/metrics.js';
import { notifierFor, type Notifier } from '../watch/notify/notifier.js';
import { InputAttempts } from '../watch/sources/attempts.js';
import { folderEvents } from '../watch/sources/folder-events.js';
import { FolderSource } from '../watch/sources/folder-source.js';
import { DEFAULT_LAYOUT, SourceError, type DropLayout, type DropSource } from '../watch/sources/model.js';
import { startWatcher, type Watcher } from '../watch/watcher.js';
import type { Dashboard } from '../ui/dashboard.js';
import { isS3Url, parseS3Url } from '../storage/s3/s3-url.js';
import { handleInput, setAside } from './handle-input.js';
import { openPipelineContext, type OpenPipeline, type PipelineContextInput } from './pipeline-context.js';
import { loadWatchRoutes, type WatchRoute, type WatchRoutes } from './watch-routes.js';

export interface WatchInput {
  /** A folder, or `s3://BUCKET/PREFIX`. */
  target: string;
  mapping?: string;
  partial?: boolean;
  sandbox?: boolean;
  account?: string;
  sandboxReset?: boolean;
  logLevel?: string;
  /** Settings given as flags, by name (configFlagsFrom). */
  flags: ConfigFlags;
  // The same settings typed, for programs calling runWatch; they count as flags (watchFlags).
  scanIntervalMs?: number;
  stableMs?: number;
  /** Inputs worked on at once (setting watchParallelFiles). */
  parallelFiles?: number;
  leaseMs?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
  layout?: Partial<DropLayout>;
  s3Endpoint?: string;
  s3Region?: string;
  s3ForcePathStyle?: boolean;
  singleInstance?: boolean;
  healthPort?: number;
  healthHost?: string;
  /** Wake the scan early on file-system events (folders; default true). The scan alone is always enough. */
  fsEvents?: boolean;
  /** Serve the dashboard (docs/ui.md) on uiPort/uiHost: `--ui`. Folders only. */
  ui?: boolean;
}

export interface WatchIo {
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborting it is SIGTERM: stop taking inputs, finish the ones in flight, exit 0. */
  signal: AbortSignal;
  /** Called once watching (tests, and the health URL for people); `events` tells each input's progress. */
  onReady?: (info: { location: string; healthUrl?: string; uiUrl?: string; events: WatchEvents }) => void;
}

/** A catalogue older than this is rebuilt: a daemon must see price codes and assets that changed. */
const CATALOGUE_MAX_AGE_MS = 10 * 60_000;

/**
 * `htorder watch DIR | s3://BUCKET/PREFIX`: wires configuration, the API session, the drop
 * source, its ledger, metrics and the health server around the watcher loop, and runs until
 * `io.signal` aborts. Returns the exit code: 0 after a graceful stop, 2 for usage or
 * configuration problems, 3 when the store cannot be reached at start.
 */
export async function runWatch(input: WatchInput, io: WatchIo): Promise<number> {
  const s3 = isS3Url(input.target) ? parseS3Url(input.target) : undefined;
  if (s3 && 'error' in s3) throw new UsageError(s3.error);
  if (s3 && input.ui) throw new UsageError('--ui shows a drop folder; an S3 prefix has no dashboard yet');
  const flags = { ...watchFlags(input), ...input.flags };
  // Checked as a whole before anything is watched: a broken rule is exit 2, not a failed file.
  const declared = await loadWatchRoutes({
    target: input.target,
    flags,
    env: io.env,
    cwd: io.cwd,
    sandbox: input.sandbox === true,
    mapping: input.mapping,
    partial: input.partial,
  });
  const routes = declared?.routes.length ? declared : undefined;
  // Loaded only with --mapping: a watcher of manifests starts without the mapping code (the
  // yaml package, jsonata, csv-parse; ~10% of its start).
  const mapping = input.mapping
    ? await (await import('../manifest/mapping/load-mapping.js')).loadMapping(input.mapping)
    : undefined;
  let source: DropSource | undefined;
  let attempts: InputAttempts | undefined;
  // The AWS SDK is loaded only to watch a bucket: a folder watcher starts without it.
  const bucket = s3 ? await loadBucketModules() : undefined;
  const sessionInput = {
    command: 'run',
    sandbox: input.sandbox,
    logLevel: input.logLevel,
    flags,
    // A daemon's log is its record: one line per input and per job outcome by default.
    defaults: WATCH_DEFAULTS,
    env: io.env,
    cwd: io.cwd,
    stderr: io.stderr,
    catalogueMaxAgeMs: CATALOGUE_MAX_AGE_MS,
  } as const;
  const pipeline = await openPipelineContext({
    ...sessionInput,
    partial: input.partial,
    mapping,
    account: input.account,
    // Only the watcher's own session resets the sandbox; routes' accounts share that sandbox.
    sandboxReset: input.sandboxReset,
    ledger: ({ config, logger, settings }) => {
      const layout: DropLayout = {
        processing: settings.get('processingDir') ?? DEFAULT_LAYOUT.processing,
        done: settings.get('doneDir') ?? DEFAULT_LAYOUT.done,
        failed: settings.get('failedDir') ?? DEFAULT_LAYOUT.failed,
      };
      const leaseMs = settings.get('leaseMs');
      // Kept by this machine's state directory: for a bucket, each machine counts its own crashes.
      attempts = new InputAttempts(
        join(config.stateDir, 'attempts'),
        settings.get('watchMaxInputAttempts') ?? SETTINGS.watchMaxInputAttempts.default,
      );
      if (s3 && bucket) {
        const { S3Store, BucketSource, BucketLedger, stateRoot } = bucket;
        const store = new S3Store({
          bucket: s3.bucket,
          endpoint: settings.get('s3Endpoint'),
          forcePathStyle: settings.get('s3ForcePathStyle'),
          region: settings.get('s3Region'),
          credentials: awsCredentials(io.env),
        });
        source = new BucketSource({
          store,
          prefix: s3.prefix,
          layout,
          leaseMs,
          singleInstance: settings.get('singleInstance'),
          onWarning: (message) => logger.warn(message),
          // Local copies of claimed objects, beside the state they belong to (as a folder's).
          workDir: join(config.stateDir, 'work'),
        });
        // Instances on different machines share the bucket, so they share its ledger too.
        return new BucketLedger(store, `${stateRoot(s3.prefix)}ledger/`, { leaseMs });
      }
      source = new FolderSource(resolve(io.cwd, input.target), {
        layout,
        leaseMs,
        onRefused: (name, why) => logger.warn({ name }, `not taken: ${why}`),
        // Private copies of claimed inputs, beside the state they belong to.
        workDir: join(config.stateDir, 'work'),
        maxInputBytes: settings.get('watchMaxInputBytes'),
      });
      // An explicit lease also bounds how long a crashed instance's order locks block a restart.
      const staleMs = settings.explicit('leaseMs') ?? settings.get('lockStaleMs');
      return new FolderLedger(config.stateDir, { staleMs });
    },
  });
  const { session } = pipeline;
  const { config, logger, settings } = session;
  const drop = source as DropSource;
  let accounts: RouteAccounts | undefined;
  try {
    accounts = routes && (await openRouteAccounts(routes, pipeline, { ...sessionInput, account: input.account }));
  } catch (err) {
    await pipeline.close();
    throw err;
  }
  const healthPort = settings.get('healthPort');
  // Metrics are read only through the health server's /metrics: without --health-port none are
  // kept, and prom-client (~40 ms of the start, an event-loop monitor, a hook on every request)
  // is not loaded.
  const metrics: WatchMetrics | undefined =
    healthPort === undefined ? undefined : new (await import('../watch/metrics.js')).WatchMetrics();
  const events = new WatchEvents();
  const uninstrument = metrics ? instrumentApi(metrics, [config.baseUrl, config.authUrl]) : () => undefined;
  let health: HealthServer | undefined;
  let ui: Dashboard | undefined;
  let notifier: Notifier | undefined;
  try {
    // Webhooks told of failures (docs/notifications.md); they listen and never hold the watcher up.
    notifier = notifierFor(settings, logger, 'watch');
    if (notifier) events.on(notifier.listener);
    try {
      await drop.init();
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      io.stderr.write(`htorder watch: ${err.message}\n`);
      await drop.close().catch(() => undefined);
      return err.kind === 'usage' ? ExitCode.Usage : ExitCode.Unavailable;
    }
    /**
     * Binds one of the watcher's ports. A port that cannot be bound (in use, privileged, an
     * address this machine lacks) is the user's to fix: said with the flags and settings that
     * chose it, the start undone, exit 2 (undefined); anything else is a bug and is thrown.
     */
    const bind = async <T>(
      start: () => Promise<T>,
      at: { host: string; port: number },
      chosenBy: [host: 'uiHost' | 'healthHost', port: 'uiPort' | 'healthPort'],
    ): Promise<T | undefined> => {
      try {
        return await start();
      } catch (err) {
        await drop.close().catch(() => undefined);
        if (!isListenError(err)) throw err;
        const [h, p] = chosenBy;
        const names = `${SETTINGS[h].flag}, ${SETTINGS[p].flag}; ${h}, ${p}`;
        io.stderr.write(`htorder watch: ${cannotListen(at, names, err)}\n`);
        return undefined;
      }
    };
    if (input.ui) {
      // Loaded only for --ui: the dashboard adds nothing to a watcher without it.
      const { startDashboard } = await import('../ui/dashboard.js');
      const at = { port: settings.get('uiPort') ?? 0, host: settings.get('uiHost') ?? SETTINGS.uiHost.default };
      ui = await bind(
        () =>
          startDashboard({
            root: drop.location,
            layout: {
              processing: settings.get('processingDir') ?? DEFAULT_LAYOUT.processing,
              done: settings.get('doneDir') ?? DEFAULT_LAYOUT.done,
              failed: settings.get('failedDir') ?? DEFAULT_LAYOUT.failed,
            },
            events,
            token: settings.get('uiToken'),
            ...at,
          }),
        at,
        ['uiHost', 'uiPort'],
      );
      if (!ui) return ExitCode.Usage;
    }
    // Bound before the watcher starts: a port in use stops the start before any input is claimed.
    // Nothing is awaited between this and startWatcher, so no probe is answered before `watcher` is set.
    let watcher: Watcher | undefined;
    if (healthPort !== undefined && metrics) {
      const at = { port: healthPort, host: settings.get('healthHost') ?? SETTINGS.healthHost.default };
      health = await bind(
        () =>
          startHealthServer({
            ...at,
            registry: metrics.registry,
            health: () => watcher?.health() ?? { status: 'ok' },
          }),
        at,
        ['healthHost', 'healthPort'],
      );
      if (!health) return ExitCode.Usage;
    }

    const leaseMs = settings.get('leaseMs') ?? SETTINGS.leaseMs.default;
    const scanIntervalMs = settings.get('scanIntervalMs');
    const handleContext = { logger, metrics, events, attempts };
    // Twice the requests in flight by default: a one-order file has one request in flight at a
    // time, and while some files wait on the API others are claimed, copied and moved.
    const parallel = settings.get('watchParallelFiles') ?? Math.min(MAX_CONCURRENCY, 2 * config.concurrency);
    watcher = startWatcher({
      source: drop,
      handle: (claimed, lease) => {
        if (!routes || !accounts || claimed.refused !== undefined) {
          return handleInput(claimed, lease, {
            ...handleContext,
            pipeline: pipeline.context,
            // The catalogue memoises answers, failures included: start afresh after an outage.
            onUnavailable: pipeline.forget,
          });
        }
        const route = routes.choose(claimed.name);
        if (!route) return setAside(claimed, routes.noRoute(claimed.name), handleContext);
        const account = accounts.of(route);
        const routed = logger.child({ route: route.name });
        routed.info(
          { file: claimed.location, mapping: route.mapping, partial: route.partial, ...account.names },
          'route chosen',
        );
        return handleInput(claimed, lease, {
          ...handleContext,
          logger: routed,
          pipeline: () => account.pipeline.context({ mapping: route.loadedMapping, partial: route.partial }),
          onUnavailable: account.pipeline.forget,
        });
      },
      logger,
      scanIntervalMs,
      stableMs: settings.get('stableTimeMs'),
      retryMinMs: settings.get('retryMinMs'),
      retryMaxMs: settings.get('retryMaxMs'),
      renewEveryMs: Math.max(100, Math.floor(leaseMs / 3)),
      orphanScanEveryMs: Math.max(1000, leaseMs),
      metrics,
      events,
      parallel,
      wakeOn:
        s3 || !settings.get('fsEvents')
          ? undefined
          : folderEvents(drop.location, (err) =>
              logger.debug({ err: err.message }, 'file-system events unavailable; scanning only'),
            ),
    });
    if (!routes) {
      // Signed in and the account learnt while the first scan waits for its second look at a
      // backlog (stability.ts: 200 ms by default) instead of after the first claim: the first
      // inputs start with their dry runs, ~2 round trips earlier. The same two calls the first
      // input makes (context() keeps them for every input); a failure is not kept, and the
      // first input asks again and reports it. Routes may use other accounts: nothing warmed.
      pipeline.context().catch((err: unknown) => {
        logger.debug({ err: (err as Error).message }, 'could not sign in at start; the first input will try again');
      });
    }
    const stop = (): void => {
      logger.info({ location: drop.location }, 'stopping: finishing the inputs in flight, taking no new ones');
      void watcher?.stop();
    };
    if (io.signal.aborted) stop();
    else io.signal.addEventListener('abort', stop, { once: true });
    logger.info(
      {
        location: drop.location,
        scanIntervalMs,
        parallelFiles: parallel,
        health: health?.url,
        ui: ui?.url,
        ...(routes ? { routes: routes.routes.map((r) => r.name), routesFrom: routes.file } : {}),
      },
      'watching for manifests',
    );
    if (declared && !routes) {
      logger.info({ routesFrom: declared.file }, 'no route of the config file is for this location: not routing');
    }
    io.onReady?.({ location: drop.location, healthUrl: health?.url, uiUrl: ui?.url, events });
    await watcher.finished;
    logger.info({ location: drop.location }, 'stopped');
    await drop.close();
    return ExitCode.Ok;
  } finally {
    uninstrument();
    await ui?.close();
    await notifier?.close();
    await health?.close();
    await accounts?.close();
    await pipeline.close();
  }
}

/**
 * WatchInput's own fields, for programs that call runWatch with typed values, as flags: the
 * same parsers and limits apply to them as to the command line. A switch that is off (false,
 * fsEvents true) is no value, so the environment or a profile can still turn it on.
 */
function watchFlags(input: WatchInput): SettingFlags {
  const flags: SettingFlags = {
    scanIntervalMs: input.scanIntervalMs,
    stableTimeMs: input.stableMs,
    watchParallelFiles: input.parallelFiles,
    leaseMs: input.leaseMs,
    retryMinMs: input.retryMinMs,
    retryMaxMs: input.retryMaxMs,
    processingDir: input.layout?.processing,
    doneDir: input.layout?.done,
    failedDir: input.layout?.failed,
    s3Endpoint: input.s3Endpoint,
    s3Region: input.s3Region,
    s3ForcePathStyle: input.s3ForcePathStyle === true ? true : undefined,
    singleInstance: input.singleInstance === true ? true : undefined,
    healthPort: input.healthPort,
    healthHost: input.healthHost,
    fsEvents: input.fsEvents === false ? false : undefined,
  };
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) as SettingFlags;
}

interface RouteAccounts {
  /** The pipeline of the route's account, and the profile/account that names it (for logs). */
  of(route: WatchRoute): { pipeline: OpenPipeline; names: { profile?: string; account?: string } };
  close(): Promise<void>;
}

/**
 * One pipeline per account the routes name, over the watcher's own (`main`, from the command
 * line, its profile and the environment) for routes that name none: a different profile is a
 * different API session, catalogue and ledger account; routes of one account share them and
 * differ only in mapping and partial, given per input. Sessions are opened here, so a profile
 * that cannot be used stops the start (exit 2); each talks to its API only when a file needs it.
 */
async function openRouteAccounts(
  routes: WatchRoutes,
  main: OpenPipeline,
  base: Omit<PipelineContextInput, 'ledger'>,
): Promise<RouteAccounts> {
  const opened = new Map<string, OpenPipeline>([['', main]]);
  const close = async (): Promise<void> => {
    for (const [key, p] of opened) if (key !== '') await p.close().catch(() => undefined);
  };
  const ownProfile = main.session.settings.profile;
  const ownAccount = base.account ?? 'us-demo';
  const keyOf = (r: WatchRoute): string =>
    (r.profile !== undefined && r.profile === ownProfile) || (r.account !== undefined && r.account === ownAccount)
      ? ''
      : r.sessionKey;
  try {
    for (const route of routes.routes) {
      const key = keyOf(route);
      if (opened.has(key)) continue;
      opened.set(
        key,
        await openPipelineContext({
          ...base,
          ...(route.profile === undefined ? {} : { flags: { ...base.flags, profile: route.profile } }),
          ...(route.account === undefined ? {} : { account: route.account, sandboxOf: main.session }),
          // A bucket's ledger is the bucket's, shared by every account (keyed by account);
          // a folder's is in each account's own state dir, like `run --profile` would use.
          ledger:
            main.ledger instanceof FolderLedger
              ? ({ config, settings }) =>
                  new FolderLedger(config.stateDir, {
                    staleMs: settings.explicit('leaseMs') ?? settings.get('lockStaleMs'),
                  })
              : () => main.ledger,
        }),
      );
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    of: (route) => ({
      pipeline: opened.get(keyOf(route)) ?? main,
      names: {
        ...(route.profile === undefined ? {} : { profile: route.profile }),
        ...(route.account === undefined ? {} : { account: route.account }),
      },
    }),
    close,
  };
}

async function loadBucketModules() {
  const [{ S3Store }, { BucketSource, stateRoot }, { BucketLedger }] = await Promise.all([
    import('../storage/s3/s3-store.js'),
    import('../watch/sources/bucket-source.js'),
    import('../storage/ledger/bucket-ledger.js'),
  ]);
  return { S3Store, BucketSource, BucketLedger, stateRoot };
}
