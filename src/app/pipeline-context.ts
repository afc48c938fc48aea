import type { ApiConfig } from '../config/api-config.js';
import { FolderLedger } from '../ledger/folder-ledger.js';
import type { LedgerStore } from '../ledger/model.js';
import type { Mapping } from '../manifest/mapping/model.js';
import type { PipelineCommand, PipelineContext } from '../pipeline/process-input.js';
import { createCatalogue, type AccountCatalogue } from '../resolve/catalogue.js';
import { openApiSession, type ApiSession, type ApiSessionInput } from './api-session.js';

export interface PipelineContextInput extends ApiSessionInput {
  command: PipelineCommand;
  partial?: boolean;
  mapping?: Mapping;
  /**
   * The ledger, built once the session is open; default the folder ledger in the state dir,
   * whose order locks go stale after `lockStaleMs`.
   */
  ledger?: (session: ApiSession) => LedgerStore;
  /** A catalogue older than this is rebuilt (a daemon must see price codes that changed); default never. */
  catalogueMaxAgeMs?: number;
}

export interface OpenPipeline {
  session: ApiSession;
  ledger: LedgerStore;
  /**
   * The context for processInput. The account is learnt from the API the first time, so a
   * throw means the API is unavailable or refused the credentials (nothing was decided).
   */
  context(): Promise<PipelineContext>;
  /** Drops the catalogue, whose memoised answers include failures: after an outage, start afresh. */
  forget(): void;
  /** Closes the session (client, in-process sandbox). */
  close(): Promise<void>;
}

/**
 * What plan, run and watch all wire before the pipeline can run: the API session, the ledger,
 * one catalogue of look-ups per account and the ledger's account key. Configuration mistakes
 * throw UsageError (exit 2) before anything is sent.
 */
export async function openPipelineContext(input: PipelineContextInput): Promise<OpenPipeline> {
  const session = await openApiSession(input);
  const { config, client, logger, settings } = session;
  let ledger: LedgerStore;
  try {
    ledger = input.ledger
      ? input.ledger(session)
      : new FolderLedger(config.stateDir, { staleMs: settings.get('lockStaleMs') });
  } catch (err) {
    await session.close();
    throw err;
  }
  let catalogue: { value: AccountCatalogue; at: number } | undefined;
  let account: string | undefined;
  const maxAge = input.catalogueMaxAgeMs ?? Infinity;
  return {
    session,
    ledger,
    context: async () => {
      if (!catalogue || Date.now() - catalogue.at > maxAge) {
        catalogue = { value: createCatalogue(client), at: Date.now() };
      }
      account ??= await accountKey(config, catalogue.value);
      return {
        command: input.command,
        partial: input.partial === true,
        concurrency: config.concurrency,
        mapping: input.mapping,
        client,
        catalogue: catalogue.value,
        ledger,
        account,
        logger,
      };
    },
    forget: () => {
      catalogue = undefined;
    },
    close: () => session.close(),
  };
}

/**
 * The ledger's account key: the region's base URL and the account id, so two credentials of
 * one account share a ledger and two accounts never do. plan, run, watch and track agree on it.
 */
export async function accountKey(
  config: Pick<ApiConfig, 'baseUrl' | 'clientId'>,
  catalogue: AccountCatalogue,
): Promise<string> {
  const profile = await catalogue.account();
  return `${config.baseUrl}#${profile?.id ?? config.clientId}`;
}
