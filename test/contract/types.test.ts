/**
 * Compile-time half of the client contract: every fixture in spec-examples, imported as JSON,
 * must fit the wire type the client declares for it (src/api/types.ts): each key the type
 * requires is present with a compatible type, and (deeply) no key the type does not know,
 * except where the type has an index signature (the spec's "not shown"). `tsc` fails on a
 * misnamed field on either side. Fixtures whose union- or literal-typed fields JSON widens to
 * `string`/`boolean` (`itemType`, `sortBy`, `sortDirection`, `isValid: false`) are checked for
 * key names only.
 */
import { describe, expect, it } from 'vitest';
import type {
  AccountProfile,
  ActiveJobsEnvelope,
  ActiveJobsQuery,
  AssetDto,
  AssetFileList,
  AssetJobsResponse,
  AssetListQuery,
  AssetType,
  CountryListResponse,
  DeliveryOption,
  EarliestShipDate,
  JobCandidate,
  JobCreateResponse,
  JobDto,
  JobStatus,
  JobValidationFailure,
  ListEnvelope,
  PatchJobDto,
  PaymentTransaction,
  PriceCodeDto,
  PriceCodeListQuery,
  PriceCodeQuery,
  ProblemDetails,
  ProcessCode,
  ProcessesResponse,
  PromoValidationResult,
  ShipmentSettings,
  SizeSet,
  StateListResponse,
  StockItem,
  StockListQuery,
  StockShippingConfig,
  TokenResponse,
  TransactionsQuery,
  UserProfile,
  UserSummary,
  UsersQuery,
} from '../../src/api/types.js';
import tokenResponse from './spec-examples/token.response.json' with { type: 'json' };
import priceCodesProcessesResponse from './spec-examples/price-codes.processes.response.json' with { type: 'json' };
import priceCodesListQuery from './spec-examples/price-codes.list.query.json' with { type: 'json' };
import priceCodesListResponse from './spec-examples/price-codes.list.response.json' with { type: 'json' };
import priceCodesGetQuery from './spec-examples/price-codes.get.query.json' with { type: 'json' };
import priceCodesGetResponse from './spec-examples/price-codes.get.response.json' with { type: 'json' };
import jobsCreateRequest from './spec-examples/jobs.create.request.json' with { type: 'json' };
import jobsCreateResponse from './spec-examples/jobs.create.response.json' with { type: 'json' };
import jobsValidateRequest from './spec-examples/jobs.validate.request.json' with { type: 'json' };
import jobsValidationFailureResponse from './spec-examples/jobs.validation-failure.response.json' with { type: 'json' };
import jobsGetResponse from './spec-examples/jobs.get.response.json' with { type: 'json' };
import jobsPatchRequest from './spec-examples/jobs.patch.request.json' with { type: 'json' };
import jobsPatchResponse from './spec-examples/jobs.patch.response.json' with { type: 'json' };
import jobsActiveQuery from './spec-examples/jobs.active.query.json' with { type: 'json' };
import jobsActiveResponse from './spec-examples/jobs.active.response.json' with { type: 'json' };
import jobsDeliveryOptionsResponse from './spec-examples/jobs.delivery-options.response.json' with { type: 'json' };
import jobsEarliestShipDateResponse from './spec-examples/jobs.earliest-ship-date.response.json' with { type: 'json' };
import assetsListQuery from './spec-examples/assets.list.query.json' with { type: 'json' };
import assetsListResponse from './spec-examples/assets.list.response.json' with { type: 'json' };
import assetsGlobalResponse from './spec-examples/assets.global.response.json' with { type: 'json' };
import assetsTypesResponse from './spec-examples/assets.types.response.json' with { type: 'json' };
import assetsGetResponse from './spec-examples/assets.get.response.json' with { type: 'json' };
import assetsFilesResponse from './spec-examples/assets.files.response.json' with { type: 'json' };
import assetsJobsResponse from './spec-examples/assets.jobs.response.json' with { type: 'json' };
import accountGetResponse from './spec-examples/account.get.response.json' with { type: 'json' };
import accountUserResponse from './spec-examples/account.user.response.json' with { type: 'json' };
import accountUserByIdResponse from './spec-examples/account.user-by-id.response.json' with { type: 'json' };
import accountUsersQuery from './spec-examples/account.users.query.json' with { type: 'json' };
import accountUsersResponse from './spec-examples/account.users.response.json' with { type: 'json' };
import accountTransactionsQuery from './spec-examples/account.transactions.query.json' with { type: 'json' };
import accountTransactionsResponse from './spec-examples/account.transactions.response.json' with { type: 'json' };
import accountShipmentSettingsResponse from './spec-examples/account.shipment-settings.response.json' with {
  type: 'json',
};
import lookupsCountriesResponse from './spec-examples/lookups.countries.response.json' with { type: 'json' };
import lookupsStatesResponse from './spec-examples/lookups.states.response.json' with { type: 'json' };
import lookupsJobStatusesResponse from './spec-examples/lookups.job-statuses.response.json' with { type: 'json' };
import lookupsProcessCodesResponse from './spec-examples/lookups.process-codes.response.json' with { type: 'json' };
import lookupsSizeSetsResponse from './spec-examples/lookups.size-sets.response.json' with { type: 'json' };
import stockListQuery from './spec-examples/stock.list.query.json' with { type: 'json' };
import stockListResponse from './spec-examples/stock.list.response.json' with { type: 'json' };
import stockGetResponse from './spec-examples/stock.get.response.json' with { type: 'json' };
import stockItemShippingResponse from './spec-examples/stock.item-shipping.response.json' with { type: 'json' };
import stockShippingQuery from './spec-examples/stock.shipping.query.json' with { type: 'json' };
import stockShippingResponse from './spec-examples/stock.shipping.response.json' with { type: 'json' };
import promoValidateQuery from './spec-examples/promo.validate.query.json' with { type: 'json' };
import promoValidateResponse from './spec-examples/promo.validate.response.json' with { type: 'json' };
import jobsEarliestShipDateQuery from './spec-examples/jobs.earliest-ship-date.query.json' with { type: 'json' };
import errorProblemResponse from './spec-examples/error.problem.response.json' with { type: 'json' };
import errorFieldErrorsResponse from './spec-examples/error.field-errors.response.json' with { type: 'json' };

/** Keys of any member of a union (`keyof` of a union gives only the shared ones). */
type AnyKey<T> = T extends unknown ? keyof T : never;
/** The type of key K in whichever union members declare it. */
type At<T, K> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;

/** Keys of S that T does not declare become `never`, recursively (arrays by element). */
type Exact<T, S> = S extends readonly (infer E)[]
  ? T extends readonly (infer TE)[]
    ? readonly Exact<TE, E>[]
    : S
  : S extends object
    ? string extends AnyKey<NonNullable<T>>
      ? S
      : { [K in keyof S]: K extends AnyKey<NonNullable<T>> ? Exact<NonNullable<At<NonNullable<T>, K>>, S[K]> : never }
    : S;

/** `value` is assignable to T, and `keysOf` has no key T lacks. */
const conforms =
  <T>() =>
  <S>(value: T, keysOf: S & Exact<T, S>): unknown => [value, keysOf];
const sameKeys =
  <T>() =>
  <S>(keysOf: S & Exact<T, S>): unknown =>
    keysOf;

const checked = [
  conforms<TokenResponse>()(tokenResponse, tokenResponse),
  conforms<ProcessesResponse>()(priceCodesProcessesResponse, priceCodesProcessesResponse),
  conforms<PriceCodeListQuery>()(priceCodesListQuery, priceCodesListQuery),
  conforms<PriceCodeDto[]>()(priceCodesListResponse, priceCodesListResponse),
  conforms<PriceCodeQuery>()(priceCodesGetQuery, priceCodesGetQuery),
  conforms<PriceCodeDto>()(priceCodesGetResponse, priceCodesGetResponse),
  sameKeys<JobCandidate>()(jobsCreateRequest),
  conforms<JobCreateResponse>()(jobsCreateResponse, jobsCreateResponse),
  sameKeys<JobCandidate>()(jobsValidateRequest),
  sameKeys<JobValidationFailure>()(jobsValidationFailureResponse),
  conforms<JobDto>()(jobsGetResponse, jobsGetResponse),
  conforms<PatchJobDto>()(jobsPatchRequest, jobsPatchRequest),
  conforms<JobDto>()(jobsPatchResponse, jobsPatchResponse),
  conforms<ActiveJobsQuery>()(jobsActiveQuery, jobsActiveQuery),
  conforms<ActiveJobsEnvelope>()(jobsActiveResponse, jobsActiveResponse),
  conforms<DeliveryOption[]>()(jobsDeliveryOptionsResponse, jobsDeliveryOptionsResponse),
  conforms<EarliestShipDate>()(jobsEarliestShipDateResponse, jobsEarliestShipDateResponse),
  conforms<AssetListQuery>()(assetsListQuery, assetsListQuery),
  conforms<ListEnvelope<AssetDto>>()(assetsListResponse, assetsListResponse),
  conforms<ListEnvelope<AssetDto>>()(assetsGlobalResponse, assetsGlobalResponse),
  conforms<AssetType[]>()(assetsTypesResponse, assetsTypesResponse),
  conforms<AssetDto>()(assetsGetResponse, assetsGetResponse),
  conforms<AssetFileList>()(assetsFilesResponse, assetsFilesResponse),
  conforms<AssetJobsResponse>()(assetsJobsResponse, assetsJobsResponse),
  conforms<AccountProfile>()(accountGetResponse, accountGetResponse),
  conforms<UserProfile>()(accountUserResponse, accountUserResponse),
  conforms<UserProfile>()(accountUserByIdResponse, accountUserByIdResponse),
  sameKeys<UsersQuery>()(accountUsersQuery),
  conforms<ListEnvelope<UserSummary>>()(accountUsersResponse, accountUsersResponse),
  sameKeys<TransactionsQuery>()(accountTransactionsQuery),
  conforms<ListEnvelope<PaymentTransaction>>()(accountTransactionsResponse, accountTransactionsResponse),
  conforms<ShipmentSettings>()(accountShipmentSettingsResponse, accountShipmentSettingsResponse),
  conforms<CountryListResponse>()(lookupsCountriesResponse, lookupsCountriesResponse),
  conforms<StateListResponse>()(lookupsStatesResponse, lookupsStatesResponse),
  conforms<JobStatus[]>()(lookupsJobStatusesResponse, lookupsJobStatusesResponse),
  conforms<ProcessCode[]>()(lookupsProcessCodesResponse, lookupsProcessCodesResponse),
  conforms<SizeSet[]>()(lookupsSizeSetsResponse, lookupsSizeSetsResponse),
  conforms<StockListQuery>()(stockListQuery, stockListQuery),
  conforms<StockItem[]>()(stockListResponse, stockListResponse),
  conforms<StockItem>()(stockGetResponse, stockGetResponse),
  conforms<StockShippingConfig[]>()(stockItemShippingResponse, stockItemShippingResponse),
  conforms<{ market: string }>()(stockShippingQuery, stockShippingQuery),
  conforms<StockShippingConfig[]>()(stockShippingResponse, stockShippingResponse),
  conforms<{ processCodes?: string }>()(promoValidateQuery, promoValidateQuery),
  conforms<PromoValidationResult>()(promoValidateResponse, promoValidateResponse),
  conforms<{ processCodes?: string }>()(jobsEarliestShipDateQuery, jobsEarliestShipDateQuery),
  conforms<ProblemDetails>()(errorProblemResponse, errorProblemResponse),
  conforms<ProblemDetails>()(errorFieldErrorsResponse, errorFieldErrorsResponse),
];

describe("the fixtures fit the client's wire types", () => {
  it('type-checks (this file fails to compile otherwise)', () => {
    expect(checked).toHaveLength(48);
  });
});
