import type { ApiClient } from '../api/client.js';
import { isNotFound } from '../api/errors.js';
import type { DeliveryMethodTable } from '../core/config/delivery-methods.js';
import type {
  AccountProfile,
  AssetDto,
  Country,
  DeliveryOption,
  EarliestShipDate,
  PriceCodeDto,
  PriceCodeQuery,
  PromoValidationResult,
  State,
  StockItem,
} from '../api/types.js';

/** The parts of the API client the catalogue reads. The real client satisfies it. */
export type CatalogueClient = Pick<
  ApiClient,
  'priceCodes' | 'jobs' | 'assets' | 'account' | 'lookups' | 'stock' | 'promo'
>;

/**
 * One account's reference data for one run, fetched lazily and at most once per distinct
 * key. Every method memoises the PROMISE, not the value, so eight jobs resolving the same
 * price code at the same moment share one in-flight request.
 *
 * Create one per account per run and drop it afterwards: prices, delivery methods and
 * assets are per account (never share a catalogue between accounts), and the earliest
 * ship date is a live calculation (never keep it between runs).
 *
 * A 404 becomes `undefined` ("no such record on this account"); any other failure
 * rejects, so the pipeline can tell "unknown value" from "API unreachable" (exit 3). A
 * failure is memoised like a success: within a run, asking again would only repeat it.
 */
export interface AccountCatalogue {
  countries(): Promise<Country[]>;
  /** States of an ISO2 country; empty when it has none. */
  states(iso2: string): Promise<State[]>;
  deliveryOptions(): Promise<DeliveryOption[]>;
  /** GET /PriceCodes/{code}, with dgX/dgY for custom sizes. */
  priceCode(code: string, dims?: { dgX: number; dgY: number }): Promise<PriceCodeDto | undefined>;
  /** Every listed price code (custom sizes are never listed). Fetched only to suggest a spelling. */
  priceCodeList(): Promise<PriceCodeDto[]>;
  asset(tag: string): Promise<AssetDto | undefined>;
  /** Tags of the account's assets matching `text` (the list's filter): to suggest a spelling for an unknown tag. */
  assetTagsLike(text: string): Promise<string[]>;
  /** GET /Stock/{code} with pricing; `code` may be a stock code or a variant code. */
  stock(code: string): Promise<StockItem | undefined>;
  /** GET /promocode/validate/{code} for a job's process codes (the answer depends on them). */
  promo(code: string, processCodes: readonly string[]): Promise<PromoValidationResult>;
  /** Once per distinct set of process codes within the run; undefined on 404. */
  earliestShipDate(processCodes: readonly string[]): Promise<EarliestShipDate | undefined>;
  /** The account profile (for its currency); undefined on 404. */
  account(): Promise<AccountProfile | undefined>;
  /**
   * The configuration's table of shops' shipping methods → this account's delivery options
   * (the config file's `deliveryMethods`), looked up before the options themselves.
   */
  readonly shopDeliveryMethods?: DeliveryMethodTable;
}

/** Stops a server that ignores `page` from being asked for pages forever. */
const MAX_LIST_PAGES = 50;
const LIST_PAGE_SIZE = 100;

/** What a catalogue is given besides the client: the configuration's table of shops' methods. */
export type CatalogueOptions = Pick<AccountCatalogue, 'shopDeliveryMethods'>;

export function createCatalogue(client: CatalogueClient, opts: CatalogueOptions = {}): AccountCatalogue {
  const once = <T>(fetch: () => Promise<T>): (() => Promise<T>) => {
    let p: Promise<T> | undefined;
    return () => (p ??= fetch());
  };
  const keyed = <A extends unknown[], T>(key: (...args: A) => string, fetch: (...args: A) => Promise<T>) => {
    const memo = new Map<string, Promise<T>>();
    return (...args: A): Promise<T> => {
      const k = key(...args);
      let p = memo.get(k);
      if (!p) {
        p = fetch(...args);
        memo.set(k, p);
      }
      return p;
    };
  };
  // A set of process codes, whatever the order or repetition: "DTF,SCR" = "SCR,DTF,DTF".
  const setKey = (codes: readonly string[]): string => [...new Set(codes)].sort().join(',');

  return {
    shopDeliveryMethods: opts.shopDeliveryMethods,
    countries: once(async () => (await client.lookups.countries()).countries),
    states: keyed(
      (iso2: string) => iso2.toUpperCase(),
      async (iso2: string) => (await client.lookups.states(iso2.toUpperCase())).states ?? [],
    ),
    deliveryOptions: once(() => client.jobs.deliveryOptions()),
    priceCode: keyed(
      (code: string, dims?: { dgX: number; dgY: number }) =>
        JSON.stringify([code, dims?.dgX ?? null, dims?.dgY ?? null]),
      (code: string, dims?: { dgX: number; dgY: number }) =>
        orUndefined(
          client.priceCodes.get(code, dims ? ({ dgX: dims.dgX, dgY: dims.dgY } satisfies PriceCodeQuery) : {}),
        ),
    ),
    priceCodeList: once(async () => {
      const all: PriceCodeDto[] = [];
      let previousFirst: string | null | undefined;
      for (let page = 1; page <= MAX_LIST_PAGES; page++) {
        const batch = await client.priceCodes.list({ page, pageSize: LIST_PAGE_SIZE });
        // A server that ignores paging answers the same page again: stop there.
        if (batch.length === 0 || batch[0].priceCode === previousFirst) break;
        previousFirst = batch[0].priceCode;
        all.push(...batch);
        if (batch.length < LIST_PAGE_SIZE) break;
      }
      return all;
    }),
    asset: keyed(
      (tag: string) => tag,
      (tag: string) => orUndefined(client.assets.get(tag)),
    ),
    assetTagsLike: keyed(
      (text: string) => text.toLowerCase(),
      async (text: string) => {
        const page = await client.assets.list({ filter: text, pageSize: 25 });
        return page.entities.map((a) => a.assetTag).filter((t): t is string => t !== null);
      },
    ),
    stock: keyed(
      (code: string) => code,
      (code: string) => orUndefined(client.stock.get(code, { includePricing: true })),
    ),
    promo: keyed(
      (code: string, processCodes: readonly string[]) => JSON.stringify([code, setKey(processCodes)]),
      (code: string, processCodes: readonly string[]) => {
        const set = setKey(processCodes);
        return client.promo.validate(code, set === '' ? {} : { processCodes: set });
      },
    ),
    earliestShipDate: keyed(setKey, (processCodes: readonly string[]) => {
      const set = setKey(processCodes);
      return orUndefined(client.jobs.earliestShipDate(set === '' ? {} : { processCodes: set }));
    }),
    account: once(() => orUndefined(client.account.get())),
  };
}

async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
