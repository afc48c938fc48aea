import { existsSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nowIso } from '../core/clock.js';
import type { LastLook, WriterCheck } from '../pipeline/other-writers.js';
import { importEntries } from '../storage/ledger/account-key.js';
import { FolderLedger } from '../storage/ledger/folder-ledger.js';
import { type LedgerAccount, LedgerEntryUnreadableError, type LedgerStore } from '../storage/ledger/model.js';
import { UsageError } from '../core/errors.js';
import type { ApiSession } from './api-session.js';

export interface Vouching {
  /** Whether the ledger vouches for the account: its record exists, and no other writer was seen. */
  vouched(): boolean;
  /** Writes the record: from now on the ledger vouches for the account. */
  vouch(): Promise<void>;
  /**
   * Whether the ledger is still the account's only writer, as far as a look at the account's
   * newest jobs tells (pipeline/other-writers.ts): looked at when asked, then at most once a
   * minute (a watcher asks for every input); inputs that ask at once share one look. A look
   * the API does not answer changes nothing: the ledger vouched before, and no other writer
   * was seen.
   */
  soleWriter(): Promise<boolean>;
}

/** How long one look for another writer holds for the inputs after it. */
const LOOK_EVERY_MS = 60_000;

type Session = Pick<ApiSession, 'config' | 'logger' | 'clock' | 'client'>;

/**
 * Whether the ledger can vouch for the account, after bringing in what other ledgers of the
 * same account hold: entries under htorder 0.1's key (`<baseUrl>#<id>`) or another spelling of
 * the URL in the same ledger, and the old `./.htorder/` ledger of the working directory. An
 * old ledger is read once per working directory (the account record remembers it); nothing it
 * records as submitted is sent again.
 */
export async function vouching(
  ledger: LedgerStore,
  account: string,
  opts: { legacyDir: string | undefined; session: Session },
): Promise<Vouching> {
  const { clock } = opts.session;
  let record: LedgerAccount | undefined = await ledger.readAccount(account);
  const imported = new Set(record?.imported ?? []);
  // An entry that cannot be read may be this account's under another key, not brought in: the
  // ledger does not begin to vouch until it is repaired or removed, so no order of it is taken
  // for one never sent without a search of the account.
  const unreadable: string[] = [];
  if (!record) await importEntries(ledger, ledger, account, (err) => unreadable.push(err.path));
  if (unreadable.length > 0)
    opts.session.logger.warn(
      { entries: unreadable },
      'ledger entries that cannot be read: until they are repaired or removed the ledger does not vouch for ' +
        'the account, and every order it has not seen is searched on the account before it is sent',
    );
  if ((await importLegacy(ledger, account, imported, opts)) && record) {
    record = { ...record, imported: [...imported] };
    await ledger.writeAccount(record);
  }
  let look: { at: number; ok: boolean } | undefined;
  let looking: Promise<boolean> | undefined;
  const lookNow = async (): Promise<boolean> => {
    // Another process sharing the ledger may have seen another writer meanwhile.
    record = (await ledger.readAccount(account)) ?? record;
    if (!record || record.otherWriter) return false;
    const found = await lookForOtherWriter(ledger, account, record, opts.session);
    if (found === undefined) return true;
    record = found.record;
    look = { at: Date.now(), ok: found.ok };
    return found.ok;
  };
  return {
    vouched: () => record !== undefined && record.otherWriter === undefined,
    vouch: async () => {
      if (record || unreadable.length > 0) return;
      record = { ledgerVersion: 1, account, vouchedSince: nowIso(clock), imported: [...imported] };
      await ledger.writeAccount(record);
    },
    soleWriter: async () => {
      if (!record || record.otherWriter) return false;
      if (look && Date.now() - look.at < LOOK_EVERY_MS) return look.ok;
      looking ??= lookNow().finally(() => {
        looking = undefined;
      });
      return looking;
    },
  };
}

/** Reads htorder 0.1's `./.htorder/` ledger into this one, once per working directory; whether it did. */
async function importLegacy(
  ledger: LedgerStore,
  account: string,
  imported: Set<string>,
  opts: { legacyDir: string | undefined; session: Session },
): Promise<boolean> {
  const { config, logger } = opts.session;
  const legacy =
    opts.legacyDir && existsSync(join(opts.legacyDir, 'ledger')) ? realpathSync(opts.legacyDir) : undefined;
  if (!legacy || legacy === resolve(config.stateDir) || imported.has(legacy)) return false;
  const n = await importEntries(new FolderLedger(legacy), ledger, account).catch((err: unknown) => {
    if (!(err instanceof LedgerEntryUnreadableError)) throw err;
    // Left out, its order could be sent again by a ledger that vouches: nothing is sent until it is mended.
    throw new UsageError(
      `${err.message}, in htorder 0.1's ledger ${legacy}, which this run reads in: nothing was sent. Look its ` +
        "order up on the account (or the printer's portal), then repair the file or remove it",
    );
  });
  imported.add(legacy);
  logger.warn(
    { from: legacy, to: config.stateDir, orders: n },
    `the ledger now lives per user in ${config.stateDir}; read ${n} order(s) of this account from ${legacy} ` +
      "(htorder 0.1's ledger, no longer written; keep it until you no longer need it)",
  );
  return true;
}

/**
 * One look for another writer; the record as it is after it (another writer noted, or where
 * the next look stops), and whether the ledger may vouch for the input that asked (not when
 * the look was cut short at its page limit). Undefined when the API did not answer.
 */
async function lookForOtherWriter(
  ledger: LedgerStore,
  account: string,
  record: LedgerAccount,
  session: Session,
): Promise<{ record: LedgerAccount; ok: boolean } | undefined> {
  const { client, logger, clock } = session;
  const last: LastLook =
    record.checkedThrough === undefined
      ? { vouchedSince: record.vouchedSince }
      : { checkedThrough: record.checkedThrough };
  // Loaded when first asked: run asks for its token before it loads the pipeline.
  const { findOtherWriter } = await import('../pipeline/other-writers.js');
  let found: WriterCheck;
  try {
    found = await findOtherWriter(
      {
        fetchPage: (page, pageSize) => client.jobs.active({ includeClosedJobs: true, page, pageSize }),
        job: (n) => client.jobs.get(n),
        ledger,
        account,
      },
      last,
    );
  } catch (err) {
    logger.debug({ err: (err as Error).message }, 'could not look for other writers to the account');
    return undefined;
  }
  const other = found.other;
  const next = await updateRecord(ledger, account, (fresh) => ({
    ...fresh,
    ...(found.newest !== undefined && found.newest > (fresh.checkedThrough ?? -1)
      ? { checkedThrough: found.newest }
      : {}),
    ...(other && !fresh.otherWriter
      ? { otherWriter: { jobNumber: other.jobNumber, orderNumber: other.orderNumber, seenAt: nowIso(clock) } }
      : {}),
  }));
  if (other) {
    logger.warn(
      { account, jobNumber: other.jobNumber, orderNumber: other.orderNumber, vouchedSince: record.vouchedSince },
      `job ${other.jobNumber} (order ${JSON.stringify(other.orderNumber)}) was created on this account through the API ` +
        `since this ledger began to vouch for it (${record.vouchedSince}), and not by this ledger: another host or ` +
        'state dir sends orders to this account. From now on every order this ledger has not seen is looked for on ' +
        'the account before it is sent. Hosts that send to one account should share one ledger ' +
        '(docs/security.md#state-and-ledgers-one-ledger-per-account-wherever-htorder-runs)',
    );
  } else if (!found.complete) {
    logger.info(
      { account, calls: found.calls },
      'more jobs were created on the account since the last look for other writers than one look reads: ' +
        'the orders this ledger has not seen are looked for on the account this time',
    );
  }
  if (!next) return { record, ok: false };
  return { record: next, ok: other === undefined && found.complete };
}

/**
 * Changes the account's record under its lock, from what it holds now (another process may
 * have changed it); undefined when the record is gone (removed by hand): nothing is vouched for.
 */
async function updateRecord(
  ledger: LedgerStore,
  account: string,
  change: (current: LedgerAccount) => LedgerAccount,
): Promise<LedgerAccount | undefined> {
  return ledger.withAccountLock(account, '.account-record', async () => {
    const current = await ledger.readAccount(account);
    if (!current) return undefined;
    const next = change(current);
    if (JSON.stringify(next) !== JSON.stringify(current)) await ledger.writeAccount(next);
    return next;
  });
}
