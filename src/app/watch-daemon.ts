import { resolve } from 'node:path';
import type { ConfigFlags } from '../config/resolve-config.js';
import { openApiSession } from './api-session.js';
import { ExitCode, UsageError } from '../errors.js';
import { BucketLedger } from '../ledger/bucket-ledger.js';
import { FolderLedger } from '../ledger/folder-ledger.js';
import type { LedgerStore } from '../ledger/model.js';
import { loadMapping } from '../manifest/mapping/load-mapping.js';
import { instrumentApi } from '../observe/api-instrumentation.js';
import { startHealthServer, type HealthServer } from '../observe/health-server.js';
import { WatchMetrics } from '../observe/watch-metrics.js';
import type { PipelineContext } from '../pipeline/process-input.js';
import { createCatalogue, type AccountCatalogue } from '../resolve/catalogue.js';
import { BucketSource, stateRoot } from '../sources/bucket-source.js';
import { folderEvents } from '../sources/folder-events.js';
import { FolderSource } from '../sources/folder-source.js';
import { handleInput } from './handle-input.js';
import { DEFAULT_LAYOUT, SourceError, type DropLayout, type DropSource } from '../sources/model.js';
import { S3Store } from '../storage/s3/s3-store.js';
import { isS3Url, parseS3Url } from '../storage/s3/s3-url.js';
import { startWatcher } from '../sources/watcher.js';

export interface WatchInput {
  /** A folder, or `s3://BUCKET/PREFIX`. */
  target: string;
  mapping?: string;
  partial?: boolean;
  sandbox?: boolean;
  account?: string;
  logLevel?: string;
  flags: ConfigFlags;
  scanIntervalMs?: number;
  stableMs?: number;
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
}

export interface WatchIo {
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborting it is SIGTERM: stop taking inputs, finish the one in flight, exit 0. */
  signal: AbortSignal;
  /** Called once watching (tests, and the health URL for people). */
  onReady?: (info: { location: string; healthUrl?: string }) => void;
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
  const mapping = input.mapping ? await loadMapping(input.mapping) : undefined;
  const s3 = isS3Url(input.target) ? parseS3Url(input.target) : undefined;
  if (s3 && 'error' in s3) throw new UsageError(s3.error);
  const session = await openApiSession({
    sandbox: input.sandbox,
    account: input.account,
    // A daemon's log is its record: one line per input and per job outcome by default.
    logLevel: input.logLevel ?? io.env.HTORDER_LOG_LEVEL ?? 'info',
    flags: input.flags,
    env: io.env,
    cwd: io.cwd,
    stderr: io.stderr,
  });
  const { config, client, logger } = session;
  const metrics = new WatchMetrics();
  const uninstrument = instrumentApi(metrics, [config.baseUrl, config.authUrl]);
  const layout: DropLayout = { ...DEFAULT_LAYOUT, ...input.layout };
  let source: DropSource;
  let ledger: LedgerStore;
  let health: HealthServer | undefined;
  try {
    if (s3) {
      const store = new S3Store({
        bucket: s3.bucket,
        endpoint: input.s3Endpoint ?? io.env.HTORDER_S3_ENDPOINT,
        forcePathStyle: input.s3ForcePathStyle === true || /^(1|true|yes)$/i.test(io.env.HTORDER_S3_FORCE_PATH_STYLE ?? ''),
        region: input.s3Region ?? io.env.HTORDER_S3_REGION,
        credentials:
          io.env.AWS_ACCESS_KEY_ID && io.env.AWS_SECRET_ACCESS_KEY
            ? { accessKeyId: io.env.AWS_ACCESS_KEY_ID, secretAccessKey: io.env.AWS_SECRET_ACCESS_KEY }
            : undefined,
      });
      source = new BucketSource({
        store,
        prefix: s3.prefix,
        layout,
        leaseMs: input.leaseMs,
        singleInstance: input.singleInstance,
        onWarning: (message) => logger.warn(message),
      });
      // Instances on different machines share the bucket, so they share its ledger too.
      ledger = new BucketLedger(store, `${stateRoot(s3.prefix)}ledger/`, { leaseMs: input.leaseMs });
    } else {
      source = new FolderSource(resolve(io.cwd, input.target), {
        layout,
        leaseMs: input.leaseMs,
        onRefused: (name, why) => logger.warn({ name }, `not taken: ${why}`),
      });
      // --lease also bounds how long a crashed instance's order locks block a restart.
      ledger = new FolderLedger(config.stateDir, input.leaseMs === undefined ? {} : { staleMs: input.leaseMs });
    }
    try {
      await source.init();
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      io.stderr.write(`htorder watch: ${err.message}\n`);
      await source.close().catch(() => undefined);
      return err.kind === 'usage' ? ExitCode.Usage : ExitCode.Unavailable;
    }

    let account: string | undefined;
    let catalogue: { value: AccountCatalogue; at: number } | undefined;
    const pipeline = async (): Promise<PipelineContext> => {
      if (!catalogue || Date.now() - catalogue.at > CATALOGUE_MAX_AGE_MS) catalogue = { value: createCatalogue(client), at: Date.now() };
      if (account === undefined) {
        // Same ledger key as plan/run, so `run` and `watch` of one account share orders.
        const profile = await catalogue.value.account();
        account = `${config.baseUrl}#${profile?.id ?? config.clientId}`;
      }
      return {
        command: 'run',
        partial: input.partial === true,
        concurrency: config.concurrency,
        mapping,
        client,
        catalogue: catalogue.value,
        ledger,
        account,
        logger,
      };
    };

    const leaseMs = input.leaseMs ?? 30_000;
    const watcher = startWatcher({
      source,
      handle: (claimed, lease) =>
        handleInput(claimed, lease, {
          pipeline,
          logger,
          metrics,
          // The catalogue memoises answers, failures included: start afresh after an outage.
          onUnavailable: () => (catalogue = undefined),
        }),
      logger,
      scanIntervalMs: input.scanIntervalMs,
      stableMs: input.stableMs,
      retryMinMs: input.retryMinMs,
      retryMaxMs: input.retryMaxMs,
      renewEveryMs: Math.max(100, Math.floor(leaseMs / 3)),
      orphanScanEveryMs: Math.max(1000, leaseMs),
      metrics,
      wakeOn: s3 || input.fsEvents === false ? undefined : folderEvents(source.location, (err) => logger.debug({ err: err.message }, 'file-system events unavailable; scanning only')),
    });
    if (input.healthPort !== undefined) {
      health = await startHealthServer({ port: input.healthPort, host: input.healthHost, registry: metrics.registry, health: () => watcher.health() });
    }
    const stop = (): void => {
      logger.info({ location: source.location }, 'stopping: finishing the input in flight, taking no new ones');
      void watcher.stop();
    };
    if (io.signal.aborted) stop();
    else io.signal.addEventListener('abort', stop, { once: true });
    logger.info(
      { location: source.location, scanIntervalMs: input.scanIntervalMs ?? 2000, health: health?.url },
      'watching for manifests',
    );
    io.onReady?.({ location: source.location, healthUrl: health?.url });
    await watcher.finished;
    logger.info({ location: source.location }, 'stopped');
    await source.close();
    return ExitCode.Ok;
  } finally {
    uninstrument();
    await health?.close();
    await session.close();
  }
}
