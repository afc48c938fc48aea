import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import { MAX_CONCURRENCY, SETTINGS, WATCH_DEFAULTS } from '../core/config/settings.js';
import { storeUnavailable } from '../api/errors.js';
import { ExitCode, UsageError } from '../core/errors.js';
import { cannotListen, isListenError } from '../core/limited-server.js';
import type { Mapping } from '../manifest/mapping/model.js';
import { writeFileAtomic } from '../storage/atomic-write.js';
import { FolderLedger } from '../storage/ledger/folder-ledger.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import { isS3Url, parseS3Url, type S3Location } from '../storage/s3/s3-url.js';
import { instrumentApi } from '../watch/api-instrumentation.js';
import { WatchEvents } from '../watch/events.js';
import { startHealthServer } from '../watch/health-server.js';
import type { WatchMetrics } from '../watch/metrics.js';
import { notifierFor } from '../watch/notify/notifier.js';
import { InputAttempts } from '../watch/attempts.js';
import { folderEvents } from '../watch/folder-events.js';
import { FolderSource } from '../watch/sources/folder-source.js';
import type { BucketSourceOptions } from '../watch/sources/bucket-source.js';
import type { LedgerMark } from '../storage/ledger/ledger-mark.js';
import { DropTakenError, dropLayout, SourceError, type DropSource } from '../watch/sources/model.js';
import { Watcher, type WatcherOptions } from '../watch/watcher.js';
import { type ApiSession, openApiSession } from './api-session.js';
import { bucketLedgerOf, bucketStateOf, openBucketStore } from './bucket-ledger.js';
import { handleInput, setAside, type HandleContext } from './handle-input.js';
import { openLedger } from './ledger-store.js';
import { takeBackApproved } from './held-take-back.js';
import { tellSettled } from './settled.js';
import { pipelineOver, type OpenPipeline, type PipelineContextInput } from './pipeline-context.js';
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
  /** Settings given as flags, by name (configFlagsFrom): the same parsers and limits as on the command line. */
  flags: ConfigFlags;
  /** Serve the dashboard (docs/ui.md) on uiPort/uiHost: `--ui`. Folders only. */
  ui?: boolean;
  /** Mark the drop location as this watcher's ledger's even when another ledger's mark is there: `--replace-ledger`. */
  replaceLedger?: boolean;
}

export interface WatchIo {
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborting it is SIGTERM: stop taking inputs, finish the ones in flight, exit 0. */
  signal: AbortSignal;
  /** Called once watching (tests, and the health URL for people); `events` tells each input's progress. */
  onReady?: (info: { location: string; healthUrl?: string; uiUrl?: string; events: WatchEvents }) => void;
  /** Called once stopped gracefully: every input in flight finished, nothing left but closing. */
  onStopped?: () => void;
}

/** A catalogue older than this is rebuilt: a daemon must see price codes and assets that changed. */
const CATALOGUE_MAX_AGE_MS = 10 * 60_000;

/** What runWatch closes at the end, last opened first. */
type Closers = (() => unknown)[];

/**
 * `htorder watch DIR | s3://BUCKET/PREFIX` until `io.signal` aborts. Returns the exit code: 0
 * after a graceful stop, 2 for usage or configuration problems, 3 when the store is unreachable.
 */
export async function runWatch(input: WatchInput, io: WatchIo): Promise<number> {
  const s3 = s3Target(input);
  const { flags } = input;
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
  const base = {
    command: 'watch',
    sandbox: input.sandbox,
    logLevel: input.logLevel,
    flags,
    // A daemon's log is its record: one line per input and per job outcome by default.
    defaults: WATCH_DEFAULTS,
    env: io.env,
    cwd: io.cwd,
    stderr: io.stderr,
    catalogueMaxAgeMs: CATALOGUE_MAX_AGE_MS,
    account: input.account,
  } as const;
  const closers: Closers = [];
  try {
    const opened = await openDrop(input, s3, base, closers, declared?.locations);
    const { pipeline, source, session } = opened;
    const routing = routes && (await openRouting(routes, pipeline, base));
    if (routing) closers.push(() => routing.close());
    const events = new WatchEvents();
    // Webhooks told of failures (docs/notifications.md); they listen and never hold the watcher up.
    const notifier = notifierFor(session.settings, session.logger, 'watch');
    if (notifier) {
      events.on(notifier.listener);
      closers.push(() => notifier.close());
    }
    closers.push(() => source.close().catch(() => undefined));
    try {
      await source.init();
    } catch (err) {
      // The ledger database (its id marks the location) unreachable past ledgerWaitMs.
      const store = storeUnavailable(err);
      if (store !== undefined) {
        io.stderr.write(`htorder watch: ${store}\n`);
        return ExitCode.Unavailable;
      }
      if (!(err instanceof SourceError)) throw err;
      io.stderr.write(`htorder watch: ${err.message}\n`);
      return err.kind === 'usage' ? ExitCode.Usage : ExitCode.Unavailable;
    }
    const served = await serve(input, opened, events, io, closers);
    if (served === undefined) return ExitCode.Usage;
    try {
      await watch({ ...opened, events, routing, routesFile: declared?.file }, served, io);
    } catch (err) {
      // Another ledger's watcher marked the location while this one ran: it stopped.
      if (!(err instanceof DropTakenError)) throw err;
      io.stderr.write(`htorder watch: ${err.message}\n`);
      return ExitCode.Usage;
    }
    return ExitCode.Ok;
  } finally {
    for (const close of closers.reverse()) await close();
  }
}

/** The bucket and prefix of an `s3://` target, undefined for a folder; UsageError when it cannot be watched. */
function s3Target(input: WatchInput): S3Location | undefined {
  if (!isS3Url(input.target)) return undefined;
  const s3 = parseS3Url(input.target);
  if ('error' in s3) throw new UsageError(s3.error);
  if (input.ui) throw new UsageError('--ui shows a drop folder; an S3 prefix has no dashboard yet');
  return s3;
}

interface OpenDrop {
  session: ApiSession;
  pipeline: OpenPipeline;
  source: DropSource;
  attempts: InputAttempts;
}

/** The API session, the drop source, the ledger beside it (a bucket's is in the bucket) and the pipeline. */
async function openDrop(
  input: WatchInput,
  s3: S3Location | undefined,
  base: PipelineContextInput,
  closers: Closers,
  /** Every bucket location the config file's routes name (`where`): other watchers' drops. */
  dropLocations: readonly string[] = [],
): Promise<OpenDrop> {
  // Loaded only with --mapping: a watcher of manifests starts without the mapping code.
  const mapping: Mapping | undefined = input.mapping
    ? await (await import('../manifest/mapping/load-mapping.js')).loadMapping(input.mapping)
    : undefined;
  // Only the watcher's own session resets the sandbox; routes' accounts share that sandbox.
  const session = await openApiSession({ ...base, sandboxReset: input.sandboxReset });
  closers.push(() => session.close());
  const { config, logger, settings } = session;
  const layout = dropLayout(settings);
  const leaseMs = settings.get('leaseMs');
  // Private copies of claimed inputs, beside the state they belong to.
  const workDir = join(config.stateDir, 'work');
  const onRefused = (name: string, why: string): void => logger.warn({ name }, `not taken: ${why}`);
  let source: DropSource;
  let ledger: LedgerStore;
  // A database every host shares (ledgerUrl): the ledger, and the claims as its leases.
  const shared =
    settings.get('ledgerUrl') === undefined
      ? undefined
      : await openLedger(session, { staleMs: lockLeaseMs(session), env: base.env, sandbox: base.sandbox === true });
  if (shared) closers.push(() => shared.ledger.close?.());
  const sharedClaims = shared?.claims?.(leaseMs ?? SETTINGS.leaseMs.default);
  // The drop location is marked as this ledger's (storage/ledger/ledger-mark.ts).
  const mark = (where: string): LedgerMark => ({ id: () => ledger.ledgerId(), where, replace: input.replaceLedger });
  if (s3) {
    // The AWS SDK is loaded only to watch a bucket: a folder watcher starts without it.
    const { BucketSource } = await import('../watch/sources/bucket-source.js');
    const store = await openBucketStore(s3, settings, base.env);
    closers.push(() => store.close());
    const singleInstance = settings.get('singleInstance');
    const onWarning = (message: string): void => logger.warn(message);
    let state: BucketSourceOptions['state'];
    let ledgerWhere: string;
    if (shared && sharedClaims) {
      if (settings.get('bucketLedger') !== undefined)
        logger.warn({ ledger: shared.where }, 'bucketLedger is not used: the ledger and claims are in ledgerUrl');
      ledger = shared.ledger;
      ledgerWhere = shared.where;
    } else {
      // Before a request is made: a ledger droppers could write is a usage error.
      const where = bucketStateOf(settings.get('bucketLedger'), s3, dropLocations);
      const stateStore = where.bucket === s3.bucket ? store : await openBucketStore(where, settings, base.env);
      state = { store: stateStore, prefix: where.prefix };
      ledger = await bucketLedgerOf(stateStore, where.prefix, leaseMs);
      ledgerWhere = `s3://${where.bucket}/${where.prefix}`;
    }
    source = new BucketSource({
      ...{ store, prefix: s3.prefix, layout, leaseMs, singleInstance, onWarning, onRefused, workDir },
      clock: session.clock,
      maxInputBytes: settings.get('watchMaxInputBytes'),
      ...(state ? { state } : {}),
      ...(sharedClaims ? { leases: sharedClaims } : {}),
      ledger: mark(ledgerWhere),
    });
  } else {
    ledger = shared?.ledger ?? folderLedger(session);
    source = new FolderSource(resolve(base.cwd, input.target), {
      ...{ layout, leaseMs, onRefused, logger, workDir },
      maxInputBytes: settings.get('watchMaxInputBytes'),
      clock: session.clock,
      ledger: mark(shared?.where ?? config.stateDir),
      ...(sharedClaims ? { leases: sharedClaims } : {}),
    });
  }
  const pipeline = pipelineOver(session, { ...base, partial: input.partial, mapping }, ledger);
  // Kept by this machine's state directory: for a bucket, each machine counts its own crashes.
  const maxAttempts = settings.get('watchMaxInputAttempts') ?? SETTINGS.watchMaxInputAttempts.default;
  const attempts = new InputAttempts(join(config.stateDir, 'attempts'), maxAttempts);
  return { session, pipeline, source, attempts };
}

/** A folder's ledger for watch: an explicit lease also bounds how long a crashed instance's locks last. */
function folderLedger(session: ApiSession): FolderLedger {
  return new FolderLedger(session.config.stateDir, { staleMs: lockLeaseMs(session) });
}

/** How long a crashed watcher's order locks last: an explicit lease, else lockStaleMs. */
function lockLeaseMs({ settings }: ApiSession): number {
  return settings.explicit('leaseMs') ?? settings.get('lockStaleMs');
}

interface Served {
  metrics?: WatchMetrics;
  healthUrl?: string;
  uiUrl?: string;
  /** The file holding the dashboard's link with its token. */
  uiLink?: string;
  /** Where the health endpoint reads the watcher's state from, once it runs. */
  watcher: { current?: Watcher };
}

/** Metrics, health server and dashboard when asked for; a port in use stops the start (undefined). */
async function serve(
  input: WatchInput,
  { session, source }: OpenDrop,
  events: WatchEvents,
  io: WatchIo,
  closers: Closers,
): Promise<Served | undefined> {
  const { config, settings } = session;
  const served: Served = { watcher: {} };
  if (input.ui) {
    // Loaded only for --ui: the dashboard adds nothing to a watcher without it.
    const { startDashboard } = await import('../ui/dashboard.js');
    const layout = dropLayout(settings);
    const token = settings.get('uiToken');
    const linkFile = (port: number): string => join(config.stateDir, 'ui', `${port}.url`);
    const ui = await bind('ui', session, io, (at) =>
      startDashboard({ root: source.location, layout, events, token, linkFile, ...at }),
    );
    if (!ui) return undefined;
    closers.push(() => ui.close());
    served.uiUrl = ui.openUrl;
    // The log drops URLs' query strings, the token's place: the link to open goes to a file only the watcher's user reads.
    served.uiLink = linkFile(Number(new URL(ui.url).port));
    await mkdir(dirname(served.uiLink), { recursive: true, mode: 0o700 });
    await writeFileAtomic(served.uiLink, `${ui.openUrl}\n`, { mode: 0o600 });
    io.stderr.write(uiLinkLines(ui, served.uiLink, io.stderr.isTTY === true));
  }
  if (settings.get('healthPort') === undefined) return served;
  // Metrics are read only through the health server's /metrics: without a health port none
  // are kept, and prom-client is not loaded.
  const metrics = new (await import('../watch/metrics.js')).WatchMetrics();
  served.metrics = metrics;
  closers.push(instrumentApi(metrics, [config.baseUrl, config.authUrl]));
  const health = await bind('health', session, io, (at) =>
    startHealthServer({
      ...at,
      registry: metrics.registry,
      health: () => served.watcher.current?.health() ?? { status: 'ok' },
    }),
  );
  if (!health) return undefined;
  closers.push(() => health.close());
  served.healthUrl = health.url;
  return served;
}

/**
 * What `watch --ui` prints at start, outside the log: on a terminal, the link to open with its
 * token (the person who started it sees it there); otherwise (a service, output kept in a
 * journal or a file) the address without the token, since that output is a log. Both name the
 * file that holds the link.
 */
function uiLinkLines(ui: { url: string; openUrl: string }, file: string, terminal: boolean): string {
  const where = `the link with its token is also in ${file} (readable by this user only)`;
  return terminal
    ? `htorder watch: dashboard: ${ui.openUrl}\nhtorder watch: ${where}\n`
    : `htorder watch: dashboard at ${ui.url}: open the link in ${file} (readable by this user only; it holds the token)\n`;
}

/**
 * Binds the dashboard's or the health server's port. One that cannot be bound is the user's to
 * fix: said with the flags and settings that chose it (undefined: exit 2); anything else throws.
 */
async function bind<T>(
  which: 'ui' | 'health',
  { settings }: ApiSession,
  io: WatchIo,
  start: (at: { host: string; port: number }) => Promise<T>,
): Promise<T | undefined> {
  const [h, p] = which === 'ui' ? (['uiHost', 'uiPort'] as const) : (['healthHost', 'healthPort'] as const);
  const at = { host: settings.get(h) ?? SETTINGS[h].default, port: settings.get(p) ?? 0 };
  try {
    return await start(at);
  } catch (err) {
    if (!isListenError(err)) throw err;
    const names = `${SETTINGS[h].flag}, ${SETTINGS[p].flag}; ${h}, ${p}`;
    io.stderr.write(`htorder watch: ${cannotListen(at, names, err)}\n`);
    return undefined;
  }
}

/** The watcher loop, from start to a graceful stop (io.signal). */
async function watch(
  w: OpenDrop & { events: WatchEvents; routing?: Routing; routesFile?: string },
  served: Served,
  io: WatchIo,
): Promise<void> {
  const { pipeline, source, session, events, routing } = w;
  const { config, logger, settings } = session;
  const leaseMs = settings.get('leaseMs') ?? SETTINGS.leaseMs.default;
  const scanIntervalMs = settings.get('scanIntervalMs');
  // Twice the requests in flight by default: a one-order file has one request in flight at a
  // time, and while some files wait on the API others are claimed, copied and moved.
  const parallel = settings.get('watchParallelFiles') ?? Math.min(MAX_CONCURRENCY, 2 * config.concurrency);
  const onFsError = (err: Error) => logger.debug({ err: err.message }, 'file-system events unavailable; scanning only');
  const watcher = new Watcher({
    source,
    handle: inputHandler(pipeline, routing, { logger, metrics: served.metrics, events, attempts: w.attempts }),
    takeBack: takeBackApproved({
      source,
      ownerOf: async (name) => {
        const route = routing?.routes.choose(name);
        return (route && routing ? routing.of(route) : pipeline).context();
      },
      own: () => pipeline.context(),
      logger,
      clock: session.clock,
    }),
    logger,
    scanIntervalMs,
    stableMs: settings.get('stableTimeMs'),
    retryMinMs: settings.get('retryMinMs'),
    retryMaxMs: settings.get('retryMaxMs'),
    renewEveryMs: Math.max(100, Math.floor(leaseMs / 3)),
    orphanScanEveryMs: Math.max(1000, leaseMs),
    settleWindowMs: settings.get('settleWindowMs'),
    onSettled: (e) => tellSettled(e, { logger, events, metrics: served.metrics }),
    metrics: served.metrics,
    events,
    parallel,
    wakeOn:
      source instanceof FolderSource && settings.get('fsEvents') ? folderEvents(source.location, onFsError) : undefined,
  });
  served.watcher.current = watcher;
  if (!routing) {
    // Signed in while the first scan settles, so the first inputs start with their dry runs; a
    // failure is not kept (the first input asks again). Routes may use other accounts.
    pipeline.context().catch((err: unknown) => {
      logger.debug({ err: (err as Error).message }, 'could not sign in at start; the first input will try again');
    });
  }
  const stop = (): void => {
    logger.info({ location: source.location }, 'stopping: finishing the inputs in flight, taking no new ones');
    // A fatal end (the location marked for another ledger) is told by `watcher.finished`, below.
    watcher.stop().catch(() => undefined);
  };
  if (io.signal.aborted) stop();
  else io.signal.addEventListener('abort', stop, { once: true });
  const { healthUrl, uiUrl, uiLink } = served;
  const routesLog = routing && { routes: routing.routes.routes.map((r) => r.name), routesFrom: routing.routes.file };
  logger.info(
    {
      location: source.location,
      scanIntervalMs,
      parallelFiles: parallel,
      health: healthUrl,
      ui: uiUrl,
      uiLink,
      ...routesLog,
    },
    'watching for manifests',
  );
  if (w.routesFile && !routing) {
    logger.info({ routesFrom: w.routesFile }, 'no route of the config file is for this location: not routing');
  }
  io.onReady?.({ location: source.location, healthUrl, uiUrl, events });
  const upkeep = keepLedgersUp(routing ? routing.all() : [pipeline], routing);
  await watcher.finished;
  await upkeep.stop();
  logger.info({ location: source.location }, 'stopped');
  io.onStopped?.();
}

/** How each claimed input is handled: through its route's account and mapping, or the watcher's own. */
function inputHandler(
  pipeline: OpenPipeline,
  routing: Routing | undefined,
  ctx: Omit<HandleContext, 'pipeline' | 'onUnavailable'>,
): WatcherOptions['handle'] {
  return (claimed, lease) => {
    if (!routing || claimed.refused !== undefined) {
      // The catalogue memoises answers, failures included: start afresh after an outage.
      return handleInput(claimed, lease, { ...ctx, pipeline: pipeline.context, onUnavailable: pipeline.forget });
    }
    const route = routing.routes.choose(claimed.name);
    if (!route) return setAside(claimed, routing.routes.noRoute(claimed.name), ctx);
    const routed = routing.of(route);
    const logger = ctx.logger.child({ route: route.name });
    const { mapping, partial, profile } = route;
    logger.info({ file: claimed.location, mapping, partial, profile, account: route.account }, 'route chosen');
    return handleInput(claimed, lease, {
      ...ctx,
      logger,
      pipeline: () =>
        routed.context({ mapping: route.loadedMapping, partial, duplicateWindowMs: route.duplicateWindowMs }),
      onUnavailable: routed.forget,
    });
  };
}

/** How soon after its start a watcher first looks whether its ledgers are due for their upkeep, and how often after. */
const UPKEEP_FIRST_MS = 60_000;
const UPKEEP_EVERY_MS = 3_600_000;

/**
 * The daily upkeep of the ledger of each account the watcher sends for (OpenPipeline.upkeep),
 * looked at a minute after the start and then hourly, one at a time, off the loop; with the
 * longest suspected-duplicate window of the routes. `stop` waits for one under way.
 */
export function keepLedgersUp(
  pipelines: readonly OpenPipeline[],
  routing: Pick<Routing, 'routes'> | undefined,
  times: { firstMs: number; everyMs: number } = { firstMs: UPKEEP_FIRST_MS, everyMs: UPKEEP_EVERY_MS },
): { stop(): Promise<void> } {
  const windowMs = Math.max(0, ...(routing?.routes.routes ?? []).map((r) => r.duplicateWindowMs ?? 0));
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const look = (): void => {
    running = running.then(() => Promise.all(pipelines.map((p) => p.upkeep(windowMs))));
    timer = setTimeout(look, times.everyMs);
    timer.unref();
  };
  timer = setTimeout(look, times.firstMs);
  timer.unref();
  return {
    stop: async () => {
      clearTimeout(timer);
      await running;
    },
  };
}

interface Routing {
  routes: WatchRoutes;
  /** The pipeline of the route's account. */
  of(route: WatchRoute): OpenPipeline;
  /** Every pipeline opened: the watcher's own and one per other account. */
  all(): OpenPipeline[];
  close(): Promise<void>;
}

/**
 * One pipeline per account the routes name (the watcher's own, `main`, for routes that name
 * none); routes of one account share it and differ only in mapping and partial, given per
 * input. Opened here, so a profile that cannot be used stops the start (exit 2).
 */
async function openRouting(routes: WatchRoutes, main: OpenPipeline, base: PipelineContextInput): Promise<Routing> {
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
      const session = await openApiSession({
        ...base,
        ...(route.profile === undefined
          ? {}
          : {
              flags: { ...base.flags, profile: route.profile },
              profileChosenBy: `chosen by ${route.name} at ${route.at}`,
            }),
        ...(route.account === undefined ? {} : { account: route.account, sandboxOf: main.session }),
      });
      // A bucket's ledger is the bucket's, shared by every account (keyed by account);
      // a folder's is in each account's own state dir, like `run --profile` would use.
      const ledger = main.ledger instanceof FolderLedger ? folderLedger(session) : main.ledger;
      opened.set(key, pipelineOver(session, base, ledger));
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    routes,
    of: (route) => opened.get(keyOf(route)) ?? main,
    all: () => [...opened.values()],
    close,
  };
}
