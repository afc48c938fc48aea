import { join } from 'node:path';
import type { ApiConfig } from '../core/config/api-config.js';
import { csvLimitsFrom, guardLimitsFrom } from '../core/config/resolve-settings.js';
import { isLoopbackHost } from '../core/config/url-security.js';
import { awsCredentials } from '../core/config/aws-credentials.js';
import { deliveryMethodTable } from '../core/config/delivery-methods.js';
import { UsageError } from '../core/errors.js';
import type { ArtworkStore } from '../storage/artwork-store.js';
import { parseS3Url } from '../storage/s3/s3-url.js';
import { ledgerAccountKey } from '../storage/ledger/account-key.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { PipelineCommand, PipelineContext, PreparedInput } from '../pipeline/process-input.js';
import { createCatalogue, type AccountCatalogue } from '../resolve/catalogue.js';
import { artworkChecks, type ArtworkChecks } from '../api/artwork-checks.js';
import { openApiSession, type ApiSession, type ApiSessionInput } from './api-session.js';
import { openLedger } from './ledger-store.js';
import { type Vouching, vouching } from './vouching.js';

export interface PipelineContextInput extends ApiSessionInput {
  command: PipelineCommand;
  partial?: boolean;
  mapping?: Mapping;
  /** A catalogue older than this is rebuilt (a daemon must see price codes that changed); default never. */
  catalogueMaxAgeMs?: number;
}

/** What may differ from one input to the next over one account. */
export interface InputOptions {
  mapping?: Mapping;
  partial?: boolean;
  /** A watch route's own suspected-duplicate window (ms), over the setting's. */
  duplicateWindowMs?: number;
}

export interface OpenPipeline {
  session: ApiSession;
  ledger: LedgerStore;
  /**
   * The context for processInput; a throw means the API is unavailable or refused the
   * credentials (the account is learnt from it). `perInput`: one input's mapping and partial.
   */
  context(perInput?: InputOptions): Promise<PipelineContext>;
  /**
   * Reads and checks an input and begins its report, with the mapping and CSV limits its
   * context will have (for processPrepared): run starts it while context() waits for the API.
   * The pipeline's code (manifest readers, reports, stages) is loaded here, on first use, so
   * the token and account requests go out before it is: they are in flight while it loads.
   */
  prepare(file: string, perInput?: InputOptions): Promise<PreparedInput>;
  /** Drops the catalogue, whose memoised answers include failures: after an outage, start afresh. */
  forget(): void;
  /**
   * Keeps the account's share of the ledger bounded once a day (pipeline/ledger-upkeep.ts), once
   * the account is known; `windowMs`: the longest suspected-duplicate window of the caller's
   * routes. Never throws: a failure is logged, and the next call tries again.
   */
  upkeep(windowMs?: number): Promise<void>;
  /** Closes the session (client, in-process sandbox). */
  close(): Promise<void>;
}

/**
 * What plan, run and watch all wire before the pipeline can run: the API session, the ledger,
 * one catalogue of look-ups per account and the ledger's account key. Configuration mistakes
 * throw UsageError (exit 2) before anything is sent.
 */
export async function openPipelineContext(
  input: PipelineContextInput,
): Promise<OpenPipeline & { ledgerWhere: string }> {
  const session = await openApiSession(input);
  const { settings } = session;
  try {
    const staleMs = settings.get('lockStaleMs');
    const { ledger, where } = await openLedger(session, { staleMs, env: input.env, sandbox: input.sandbox === true });
    const pipeline = pipelineOver(session, input, ledger);
    return {
      ...pipeline,
      // Where the ledger is, for people: a state dir or a database.
      ledgerWhere: where,
      close: async () => {
        await pipeline.close();
        await ledger.close?.();
      },
    };
  } catch (err) {
    // A setting refused as the pipeline opens: the session (an in-process sandbox's server) must not outlive it.
    await session.close();
    throw err;
  }
}

/** The pipeline of an open session over `ledger` (closing it closes the session). */
export function pipelineOver(
  session: ApiSession,
  input: Pick<
    PipelineContextInput,
    'command' | 'partial' | 'mapping' | 'catalogueMaxAgeMs' | 'sandbox' | 'cwd' | 'env'
  >,
  ledger: LedgerStore,
): OpenPipeline {
  const { config, client, logger, settings, clock } = session;
  const reading = readingFrom(settings);
  // Read (and so checked) when the pipeline opens: a broken table is a usage error before anything is sent.
  const shopDeliveryMethods = deliveryMethodTable(settings);
  let store: Promise<{ store: ArtworkStore; marginDays: number; maxInputBytes: number } | undefined> | undefined;
  const artwork = artworkFrom(settings, input.sandbox === true || isLoopbackHost(new URL(config.baseUrl).hostname));
  const artworkLimits = artworkLimitsFrom(settings);
  const lookups = runLookups(
    () => ({ value: createCatalogue(client, { shopDeliveryMethods }), artwork: artwork() }),
    input.catalogueMaxAgeMs ?? Infinity,
  );
  // htorder 0.1 kept the ledger in ./.htorder/ of the working directory: still read (imported).
  const legacyDir =
    input.sandbox || settings.explicit('stateDir') !== undefined ? undefined : join(input.cwd, '.htorder');
  const learn = learnOnce((catalogue) =>
    accountKey(config, catalogue).then(async (account) => ({
      account,
      vouch: await vouching(ledger, account, { legacyDir, session }),
      currency: await accountCurrency(catalogue),
    })),
  );
  const always = settings.get('verifyNewOrders') === 'always';
  let known: string | undefined; // the account once an input has learnt it: the upkeep's
  return {
    session,
    ledger,
    context: async (perInput) => {
      // Each input reads the calendar where it is now (`htorder sandbox clock` may have moved it),
      // while the account is asked for: that request goes out first.
      const { value: current, artwork: currentArtwork } = lookups.current();
      const learning = learn(current);
      learning.catch(() => undefined);
      await session.refreshClock();
      const { account, vouch, currency } = await learning;
      known = account;
      store ??= artworkStoreFrom(settings, input.env, artworkLimits);
      const artworkStore = await store;
      return {
        command: input.command,
        ...(artworkStore ? { artworkStore } : {}),
        partial: (perInput ?? input).partial === true,
        concurrency: config.concurrency,
        mapping: (perInput ?? input).mapping,
        client,
        // The catalogue this input started with: another input's outage may drop the current
        // one (forget) while this one waits for the account.
        catalogue: current,
        ...(currentArtwork ? { artwork: currentArtwork } : {}),
        ledger,
        account,
        ...(currency ? { currency } : {}),
        ...reading,
        guard: { ...guardLimitsFrom(settings), ...windowOf(perInput) },
        ...unseenRule(always, vouch),
        logger,
        clock,
      };
    },
    prepare: async (file, perInput) => {
      const { prepareInput } = await import('../pipeline/process-input.js');
      const mapping = (perInput ?? input).mapping;
      return prepareInput(file, { command: input.command, mapping, ...reading, clock, logger });
    },
    forget: lookups.forget,
    upkeep: ledgerUpkeep(ledger, session, () => known),
    close: async () => {
      await lookups.close();
      (await store?.catch(() => undefined))?.store.close();
      await session.close();
    },
  };
}

/**
 * OpenPipeline.upkeep: the ledger's daily upkeep of the account, once an input has learnt it.
 * ledgerRetention is read (and so checked) when the pipeline opens.
 */
function ledgerUpkeep(
  ledger: LedgerStore,
  session: Pick<ApiSession, 'settings' | 'clock' | 'logger'>,
  known: () => string | undefined,
): (windowMs?: number) => Promise<void> {
  const { settings, clock, logger } = session;
  const retentionMs = settings.get('ledgerRetention');
  return async (windowMs = 0) => {
    const account = known();
    if (account === undefined) return;
    const own = guardLimitsFrom(settings).duplicateWindowMs;
    const options = { clock, retentionMs, windowMs: Math.max(own, windowMs) };
    try {
      const { upkeepLedger } = await import('../pipeline/ledger-upkeep.js');
      const done = await upkeepLedger(ledger, account, options);
      if (done && done.folded + done.notes + done.moved + done.approvals > 0)
        logger.info({ account, ...done }, 'kept the ledger up: folded old orders, removed expired notes');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'could not keep the ledger up; the next run tries again');
    }
  };
}

/** How every input is read: the same for prepare (run's first input) and each context. */
function readingFrom(settings: ApiSession['settings']) {
  return {
    csvLimits: csvLimitsFrom(settings),
    manifestMaxBytes: settings.get('manifestMaxBytes'),
    defaultDeliveryMethod: settings.get('defaultDeliveryMethod'),
  };
}

/**
 * Orders the ledger has never seen are searched first unless it vouches for the account; while
 * it does, it is asked whether it is still the account's only writer.
 */
function unseenRule(always: boolean, vouch: Vouching): Pick<PipelineContext, 'unseen' | 'soleWriter'> {
  if (always) return { unseen: {} };
  return vouch.vouched() ? { soleWriter: vouch.soleWriter } : { unseen: { vouch: vouch.vouch } };
}

function windowOf(perInput: InputOptions | undefined): { duplicateWindowMs?: number } {
  const ms = perInput?.duplicateWindowMs;
  return ms === undefined ? {} : { duplicateWindowMs: ms };
}

/**
 * The ledger's account key, the one plan, run, watch and track agree on: region and account id
 * (ledgerAccountKey), or for the in-process sandbox the key its configuration fixes.
 */
export async function accountKey(
  config: Pick<ApiConfig, 'baseUrl' | 'clientId' | 'ledgerAccount'>,
  catalogue: AccountCatalogue,
): Promise<string> {
  if (config.ledgerAccount !== undefined) return config.ledgerAccount;
  const profile = await catalogue.account();
  return ledgerAccountKey(config.baseUrl, profile?.id ?? config.clientId);
}

/**
 * The account key and the ledger's vouching, learnt once for every input (inputs that start
 * together share one GET /account); a failure is not kept: the next input asks again.
 */
function learnOnce<T>(learn: (catalogue: AccountCatalogue) => Promise<T>): (catalogue: AccountCatalogue) => Promise<T> {
  let first: Promise<T> | undefined;
  return (catalogue) => {
    first ??= learn(catalogue);
    const learnt = first;
    return learnt.catch((err: unknown) => {
      if (first === learnt) first = undefined;
      throw err;
    });
  };
}

/**
 * The account's currency, from the profile accountKey read (the catalogue keeps it: no second
 * request); none when the profile names none or could not be read.
 */
async function accountCurrency(catalogue: AccountCatalogue): Promise<string | undefined> {
  const profile = await catalogue.account().catch(() => undefined);
  return profile?.currency ?? undefined;
}

interface Lookups {
  value: AccountCatalogue;
  artwork?: ArtworkChecks;
}

/**
 * The catalogue and the artwork checks, one per account per run, made afresh when older than
 * `maxAge` (a daemon must see price codes that changed) or after an outage (`forget`: their
 * memoised answers include failures).
 */
function runLookups(make: () => Lookups, maxAge: number) {
  let held: (Lookups & { at: number }) | undefined;
  return {
    current(): Lookups {
      if (!held || Date.now() - held.at > maxAge) {
        void held?.artwork?.close();
        held = { ...make(), at: Date.now() };
      }
      return held;
    },
    forget(): void {
      void held?.artwork?.close();
      held = undefined;
    },
    close: async (): Promise<void> => {
      await held?.artwork?.close();
    },
  };
}

/**
 * The artwork checks a catalogue's lifetime shares (artworkCheck). A printer on loopback (the
 * sandbox, a test rig) fetches from this machine, so loopback links are allowed for it.
 */
function artworkFrom(settings: ApiSession['settings'], sandbox: boolean): () => ArtworkChecks | undefined {
  const mode = settings.get('artworkCheck');
  if (mode === 'off') return () => undefined;
  const allowPrivate = settings.get('artworkAllowPrivate') === true;
  const budgetMs = settings.get('artworkCheckBudgetMs');
  return () => artworkChecks(mode === 'warn' ? 'warn' : 'on', { allowLoopback: sandbox, allowPrivate, budgetMs });
}

/** The artwork store's limits, read (and so checked) when the pipeline opens, store or not: a bad value is a usage error, not an outage. */
function artworkLimitsFrom(settings: ApiSession['settings']): { marginDays: number; maxInputBytes: number } {
  return { marginDays: settings.get('artworkLinkMarginDays'), maxInputBytes: settings.get('artworkMaxInputBytes') };
}

/**
 * The artwork store of the artworkStore setting (undefined when unset). The AWS SDK is loaded
 * only then: a run without `artwork:` files starts without it.
 */
async function artworkStoreFrom(
  settings: ApiSession['settings'],
  env: Record<string, string | undefined>,
  limits: { marginDays: number; maxInputBytes: number },
): Promise<{ store: ArtworkStore; marginDays: number; maxInputBytes: number } | undefined> {
  const target = settings.get('artworkStore');
  if (target === undefined) return undefined;
  const where = parseS3Url(target);
  if ('error' in where) throw new UsageError(`artworkStore: ${where.error}`);
  const { ArtworkStore } = await import('../storage/artwork-store.js');
  const publicBaseUrl = settings.get('artworkPublicBaseUrl');
  const store = new ArtworkStore({
    bucket: where.bucket,
    prefix: where.prefix,
    endpoint: settings.get('s3Endpoint'),
    forcePathStyle: settings.get('s3ForcePathStyle'),
    region: settings.get('s3Region'),
    credentials: awsCredentials(env),
    ...(publicBaseUrl ? { publicBaseUrl } : {}),
  });
  return { store, ...limits };
}
