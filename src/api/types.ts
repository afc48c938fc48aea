/**
 * The heat-transfer ordering API's wire types, transcribed from the printer's API
 * specification. Field names and shapes live here once: the client (src/api) and the sandbox
 * (src/sandbox) both import them. Sharing them does not make either side right: a misreading
 * here would be wrong in both the same way. What holds both to the specification is
 * test/contract/: fixtures transcribed from the specification (test/contract/spec-examples),
 * which the client must parse to the same values and the sandbox must answer in the same
 * shape. Change a type here only together with those fixtures.
 *
 * Field names are the API's own, unchanged (case-sensitive). "nullable" in the spec
 * becomes `| null`. Where the spec says "not shown", the type is deliberately loose
 * (`unknown` / index signature) and a comment says so.
 */

// ---------------------------------------------------------------- price codes

export interface PriceBand {
  /** Lowest quantity in the band, inclusive. On the first band: the minimum orderable quantity. */
  from: number;
  /** Highest quantity, inclusive. Null on the top band. */
  to: number | null;
  unitPrice: number;
}

export interface EnumerableValue {
  value: string;
  text: string;
  selected: boolean;
}

export type AttributeType = 'text' | 'int' | 'decimal' | 'select';

/** ProcessAttribute. Branch on `type`; not every field is present on every entry. */
export interface ProcessAttribute {
  name: string | null;
  type: AttributeType | string | null;
  label?: string | null;
  description?: string | null;
  required: boolean;
  isMetaDataAttribute: boolean;
  enumerableValues?: EnumerableValue[] | null;
  assetAttributeName?: string | null;
  /** Text attributes only. */
  minLength?: number;
  maxLength?: number;
  /** Numeric attributes only. */
  minValue?: number;
  maxValue?: number;
}

export type SizeUnit = 'cm' | 'in' | 'mm';

export interface PriceCodeDto {
  priceCode: string | null;
  description: string | null;
  categoryCode: string | null;
  categoryName: string | null;
  name: string | null;
  processCode: string | null;
  masterProcessCode: string | null;
  minimumQuantity: number;
  externalSupplier: string | null;
  externalPriceCode: string | null;
  hasMetaDataAttributes: boolean;
  standardSetup: number | null;
  standardReset: number | null;
  sampleAvailable: boolean;
  samplePrice?: number | null;
  sampleLabel?: string | null;
  sizeUnit: SizeUnit | string | null;
  sizeWidth: number | null;
  sizeHeight: number | null;
  attributes: ProcessAttribute[] | null;
  priceBands: PriceBand[] | null;
}

export interface PricingProcessDto {
  processCode: string | null;
  description: string | null;
  active: boolean;
  sheetRank: number;
  sheetColor: string | null;
  tooltip: string | null;
  mapsToMaster: string | null;
  maximumSheetUnit: SizeUnit | string | null;
  maximumSheetWidth: number | null;
  maximumSheetHeight: number | null;
}

export interface ProcessesResponse {
  processes: PricingProcessDto[];
}

export interface PriceCodeListQuery {
  page?: number;
  pageSize?: number;
  filter?: string;
}

export interface PriceCodeQuery {
  dgX?: number;
  dgY?: number;
  stitches?: number;
}

// ---------------------------------------------------------------- jobs

export interface JobPermissions {
  canEdit: boolean;
  /** Set when canEdit is false. */
  lockedReason: string | null;
}

export interface JobLocation {
  name: string;
  /** IANA identifier. */
  timezone: string;
}

export interface InvoiceFile {
  uri: string;
  uriExpires: string;
}

export interface ShippingAddressTracking {
  trackingNumber: string | null;
  trackingLink: string | null;
  // Other fields of a shipping address: not shown.
  [key: string]: unknown;
}

export interface JobLineDto {
  jobLineId: number;
  assetSku: string | null;
  processCode: string | null;
  garment: string | null;
  description: string | null;
  comments: string | null;
  quantity: number;
  unitPrice: number;
  customerReference: string | null;
  imageUrl: string | null;
  gang: string | null;
  jobLineStatus: string | null;
}

export interface JobDto {
  jobNumber: number;
  description: string | null;
  comments: string | null;
  jobStatus: string | null;
  orderNumber: string | null;
  dateDue: string;
  mustDate: boolean;
  creator: string | null;
  invoiceNumber: string | null;
  orderGroup: string | null;
  orderGroupSequence: number | null;
  customerId: number;
  dateIn: string | null;
  dateOut: string | null;
  shippedDateStatus: string | null;
  shippedDaysToProcess: number | null;
  processingDays: number | null;
  taxTotal: number | null;
  isCancelable: boolean;
  permissions: JobPermissions | null;
  location: JobLocation | null;
  invoiceFile: InvoiceFile | null;
  lines: JobLineDto[];
  shippingAddresses: ShippingAddressTracking[];
}

export interface Tracking {
  trackingNumber: string | null;
  trackingLink: string | null;
}

export interface ActiveJobDto {
  permissions: JobPermissions | null;
  jobNumber: number;
  masterJobStatus: string | null;
  originCode: string | null;
  description: string | null;
  mustDate: boolean;
  dateDue: string | null;
  dateOut: string | null;
  shippedDaysToProcess: number | null;
  orderNumber: string | null;
  orderGroup: string | null;
  orderGroupSequence: number | null;
  /** Empty when none. */
  tracking: Tracking[];
}

export interface ActiveJobsQuery {
  excludeJobNumber?: number;
  /** 1-based. */
  page?: number;
  /** Default 20, max 100. */
  pageSize?: number;
  searchText?: string;
  includeClosedJobs?: boolean;
  /** Allowed values: not shown. */
  sortColumn?: string;
  /** Allowed values: not shown. */
  sortDirection?: string;
  orderGroup?: string;
  customerUserId?: number;
}

// -------- job create request (JobCandidate)

export interface DeliveryAddress {
  /** A `code` from GET /Jobs/delivery-options. Not free text. */
  deliveryMethod: string;
  shippingInstructions?: string | null;
  contactName?: string | null;
  organisation?: string | null;
  phone?: string | null;
  mobile?: string | null;
  emailAddress?: string | null;
  isSaturdayDelivery?: boolean;
  streetAddress?: string | null;
  address2?: string | null;
  suburb?: string | null;
  city?: string | null;
  state?: string | null;
  /** An abbreviation. */
  stateCode?: string | null;
  postalCode?: string | null;
  /** Exactly two characters, ISO 3166-1 alpha-2. */
  countryCodeISO2?: string | null;
  /** Country name. */
  country?: string | null;
}

export type ItemType = 'PriceCode' | 'Asset' | 'Stock';

interface JobLineRequestCommon {
  /** The interface does not enumerate these values; other item types exist but are not shown. */
  itemType: ItemType | string;
  code: string | null;
  quantity?: number;
  customerReference?: string | null;
  groupHead?: string | null;
  group?: string | null;
}

export interface PriceCodeLineRequest extends JobLineRequestCommon {
  itemType: 'PriceCode';
  attributes?: Record<string, string>;
  externalArtworkUrl?: string;
  externalId?: string;
  isSample?: boolean;
}

export interface AssetLineRequest extends JobLineRequestCommon {
  itemType: 'Asset';
  garment?: string;
  comment?: string;
}

export interface StockLineRequest extends JobLineRequestCommon {
  itemType: 'Stock';
  variantCode?: string;
  sizeQuantities?: Record<string, number>;
}

export type JobLineRequest = PriceCodeLineRequest | AssetLineRequest | StockLineRequest;

export interface JobCandidate {
  orderNumber?: string | null;
  orderComment?: string | null;
  customerUserId?: number | null;
  dateDue?: string | null;
  mustDate?: boolean;
  timeSensitive?: boolean;
  description?: string | null;
  deliveryAddress: DeliveryAddress;
  promocode?: string | null;
  items: JobLineRequest[];
  orderGroup?: string | null;
  orderGroupSequence?: number | null;
  validateOnly?: boolean;
  locationCodeOverride?: string | null;
}

export interface JobLineDetail {
  needsArtworkToBeUploaded: boolean;
  customerReference: string;
  quantity: number;
  newAssetSku: string | null;
  jobLineLabelUrl: string | null;
}

export interface JobCreateResponse {
  jobNumber: number;
  location: string | null;
  dateDue: string | null;
  totalJobCost: number;
  expectingArtworkToBeUploaded: boolean;
  jobLineDetails: JobLineDetail[];
}

/**
 * A `validateOnly` success: the spec says a good payload "answers with the message
 * 'Validated with NO Errors. Job NOT created.'" but the status and body shape are not shown.
 * The sandbox answers 200 with this object; the client must accept any 2xx body.
 */
export interface ValidateOnlyResponse {
  isValid: true;
  message: string;
}

export const VALIDATE_ONLY_MESSAGE = 'Validated with NO Errors. Job NOT created.';

export interface PatchJobDto {
  description?: string | null;
  comments?: string | null;
  orderNumber?: string | null;
  mustDate?: boolean | null;
  dateDue?: string | null;
  /** Super-user only; a customer credential gets 403. */
  locationCode?: string | null;
}

export interface DeliveryOption {
  code: string;
  label: string;
  isCollection: boolean;
  rank: number;
  gangRank: number;
  /** Same as code. */
  value: string;
  deliveryLabelEnabled: boolean;
}

export interface DateExclusion {
  dateFrom: string;
  dateTo: string;
}

export interface EarliestShipDate {
  shippingDateUtc: string;
  shippingDateLocal: string;
  timezone: string;
  dateExclusions: DateExclusion[];
}

// ---------------------------------------------------------------- assets

export interface AssetDto {
  assetId: number;
  assetTag: string | null;
  processCode: string | null;
  description: string | null;
  garment: string | null;
  priceTierCode: string | null;
  setup: number;
  reset: number;
  priceCode: string | null;
  assetUrl: string | null;
  createDate: string;
  isGlobal: boolean;
  isArchived: boolean;
  priceBands: PriceBand[];
  /** Single-asset form only. */
  externalId?: string | null;
  customerId?: number | null;
  /** Present only for super-user callers. */
  attributes?: Record<string, unknown> | null;
}

export interface AssetListQuery {
  page?: number;
  pageSize?: number;
  sortColumn?: string;
  sortDirection?: string;
  includeProcesses?: string;
  excludeProcesses?: string;
  filter?: string;
  isArchived?: boolean;
  priceCodeContains?: string;
  priceCodeNotContains?: string;
}

export interface AssetFile {
  fileId: string;
  fileName: string | null;
  fileSize: number;
  dateUploaded: string | null;
  isImage: boolean;
  cdnUrl: string | null;
}

export interface HistoricAssetFile extends AssetFile {
  action: string | null;
}

export interface AssetFileList {
  assetTag: string | null;
  currentFiles: AssetFile[];
  historicFiles: HistoricAssetFile[];
}

export interface AssetJob {
  jobNumber: number;
  orderNumber: string | null;
  description: string | null;
  quantity: number;
  /** Null while active. */
  dateOut: string | null;
  masterJobStatus: string | null;
}

export interface AssetJobsResponse {
  assetCode: string | null;
  jobs: AssetJob[];
  totalCount: number;
}

export interface AssetType {
  process: string;
  assetType: string;
}

// ---------------------------------------------------------------- paging envelopes

/** Used by assets, global assets, account users, transactions. */
export interface ListEnvelope<T> {
  pageSize: number;
  returnedResults: number;
  totalResults: number;
  totalPages: number;
  /** 1-based. */
  currentPage: number;
  hasNext: boolean;
  hasPrevious: boolean;
  filter: string | null;
  nextUrl: string | null;
  previousUrl: string | null;
  entities: T[];
}

/** Used by GET /Jobs/active. */
export interface ActiveJobsEnvelope {
  items: ActiveJobDto[];
  totalCount: number;
  /** 1-based. */
  pageNumber: number;
  pageSize: number;
  totalPages: number;
  hasPreviousPage: boolean;
  hasNextPage: boolean;
}

// ---------------------------------------------------------------- account

export interface EntityAddress {
  id: number;
  streetAddress: string | null;
  addressLine2: string | null;
  city: string | null;
  /** Abbreviation. */
  state: string | null;
  stateFull: string | null;
  postalCode: string | null;
  countryCode: string | null;
  countryName: string | null;
  contactName: string | null;
  organisation: string | null;
  phone: string | null;
  emailAddress: string | null;
  addressSummaryOneLine: string | null;
}

export interface TaxCertificate {
  id: number;
  customerId: number;
  name: string | null;
  businessName: string | null;
  exemptionNumber: string | null;
  employerIdentificationNumber: string | null;
  businessEntityId: string | null;
  licenseExpiryDate: string | null;
  exemptionType: string | null;
  exemptionState: string | null;
  fileName: string | null;
  hasFile: boolean;
  createdAt: string | null;
  updatedAt: string | null;
  entityFileId: number;
  /** Time-limited. */
  cdnUrl: string | null;
  /** Values: not shown. */
  fileStatus: string | null;
  fileStatusDescription: string | null;
}

export interface PaymentMethod {
  id: string;
  gatewayProvider: string | null;
  cardName: string | null;
  /** Masked. */
  cardNumber: string | null;
  /** MM/YY. */
  cardExpiry: string | null;
  cardHolderName: string | null;
  dateCreatedUtc: string | null;
  isDefault: boolean;
}

export interface AccountProfile {
  id: number;
  name: string | null;
  priceTierCode: string | null;
  currency: string | null;
  taxRateType: string | null;
  taxRate: number | null;
  taxSystemTaxExempt: boolean;
  taxSystemTaxExemptReason: string | null;
  showPayNow: boolean;
  creditCardRequired: boolean;
  shipmentCarriersCSV: string | null;
  excludeShipmentsCsv: string | null;
  courierAccountCode: string | null;
  courierSiteID: string | null;
  crmId: string | null;
  accountManagerName: string | null;
  accountManagerEmail: string | null;
  tierLast12Months: string | null;
  paymentTermDays: number | null;
  paymentTermType: string | null;
  entityAddress: EntityAddress | null;
  taxCertificates: TaxCertificate[];
  paymentMode: string | null;
  paymentMethods: PaymentMethod[];
}

export interface UserProfile {
  id: number;
  guid: string;
  customerId: number;
  customerName: string | null;
  userName: string | null;
  firstName: string | null;
  lastName: string | null;
  emailAddress: string | null;
  active: boolean;
  phone: string | null;
  mobile: string | null;
  streetAddress: string | null;
  addressLine2: string | null;
  suburb: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
  locationID: number | null;
  locationName: string | null;
  defaultPage: string | null;
  /** At most 5 characters. */
  orderNumberPrefix: string | null;
  receiveEmails: boolean;
  promotionRecipient: boolean;
  receiveInvoice: boolean;
  receiveInwards: boolean;
  textNotifyProof: boolean;
  textNotifyDispatch: boolean;
  usernameLoginOnly: boolean;
  lastLogin: string | null;
  loginCount: number;
}

export interface UserSummary {
  id: number;
  guid: string;
  userName: string | null;
  firstName: string | null;
  lastName: string | null;
  emailAddress: string | null;
  active: boolean;
  locationName: string | null;
  usernameLoginOnly: boolean;
  lastLogin: string | null;
  loginCount: number;
}

export type UserSortBy = 'LastName' | 'FirstName' | 'UserName' | 'Email' | 'LastLoginUtc' | 'LoginCount';
export type SortDirection = 'ASC' | 'DESC';

export interface UsersQuery {
  includeInactive?: boolean;
  page?: number;
  pageSize?: number;
  sortBy?: UserSortBy;
  sortDirection?: SortDirection;
  textFilter?: string;
}

export interface PaymentTransaction {
  id: number | string;
  gatewayType: string | null;
  transactionStatus: string | null;
  createdAt: string | null;
  completedAt: string | null;
  cardName: string | null;
  cardNumber: string | null;
  cardExpiry: string | null;
  currencySettlement: string | null;
  amountSettlement: number;
  merchantEntityType: string | null;
  merchantEntityId: number | null;
}

export type TransactionSortBy = 'Id' | 'CreatedAt' | 'CompletedAt' | 'AmountSettlement';

export interface TransactionsQuery {
  page?: number;
  pageSize?: number;
  sortBy?: TransactionSortBy;
  sortDirection?: SortDirection;
  completedOnly?: boolean;
  textFilter?: string;
}

export interface FreightRate {
  carrier: string | null;
  carrierName: string | null;
  service: string | null;
  serviceName: string | null;
  package: string | null;
  packageName: string | null;
  chargeType: 'markup_on_order' | 'fixed_per_package' | string;
  value: number;
  minimum: number | null;
  isDefault: boolean;
}

export interface ShipmentSettings {
  availableCarriers: string[];
  carrierOptions: string[];
  receiverPays: {
    billingAccountNumber: string | null;
    billingPostalCode: string | null;
    billingCountryCode: string | null;
  } | null;
  showCustomerAddressOnLabel: boolean;
  handlingFee: number;
  applyHandlingFeeInsteadOfFreight: boolean;
  jobComment: string | null;
  availableShipmentTypes: string[];
  shipmentTypeOptions: { code: string; name: string }[];
  freightRates: FreightRate[];
}

// ---------------------------------------------------------------- lookups

export interface Country {
  name: string;
  iso2: string;
  iso3: string;
  hasSuburb: boolean;
  hasState: boolean;
  hasPostalCode: boolean;
}

export interface CountryListResponse {
  countries: Country[];
  /** ISO2. */
  defaultCountry: string;
}

export interface State {
  name: string;
  abbreviation: string;
}

export interface StateListResponse {
  countryCode: string;
  /** Empty when the country has none. */
  states: State[];
}

export interface JobStatus {
  id: number;
  name: string;
}

export interface ProcessCode {
  processCode: string;
  description: string | null;
  rank: number;
  metadata: {
    setupApplies: boolean;
    resetApplies: boolean;
    scheduleable: boolean;
    physicalStockRequired: boolean;
    printable: boolean;
  };
}

export interface SizeSet {
  id: number;
  name: string;
  /** In position order. */
  sizes: string[];
}

// ---------------------------------------------------------------- stock

export interface StockImage {
  url: string;
  name: string | null;
  altText: string | null;
}

export interface StockVariant {
  variantCode: string;
  colour: string | null;
  variantImageUrl: string | null;
  numberOfSizes: number;
  /** Comma-separated sizes. Equipment uses the single size `Qty`. */
  sizesCsv: string;
}

export interface FulfilmentLocation {
  locationCode: string;
  locationName: string | null;
  locale?: string | null;
  shipFromCity?: string | null;
  shipFromCountryCodeIso2?: string | null;
}

export interface ShipmentTypeOption {
  code: string;
  /** Server-supplied. */
  name: string;
  /** Null: use the rated price; 0: free; positive: a flat override. */
  price: number | null;
}

export interface StockShippingConfig {
  id: number;
  stockItemId: number;
  markets: string[];
  shipMode: string | null;
  fulfilmentLocations: FulfilmentLocation[];
  weight: number | null;
  weightUnit: 'kg' | 'lb' | string | null;
  length: number | null;
  width: number | null;
  height: number | null;
  dimensionUnit: 'cm' | 'in' | string | null;
  fixedShipping: number | null;
  groundOnly: boolean;
  estimatedLeadDays: number | null;
  active: boolean;
  createdAt: string;
  updatedAt: string;
  /** Row order is meaningful; the first row may be treated as the default. */
  shipmentTypeOptions: ShipmentTypeOption[];
}

/** The summary embedded in a stock item: without stockItemId, active, createdAt, updatedAt. */
export type StockShippingConfigSummary = Omit<
  StockShippingConfig,
  'stockItemId' | 'active' | 'createdAt' | 'updatedAt'
>;

export interface StockItem {
  supplier: string | null;
  categoryName: string | null;
  categoryUnitId: number | null;
  stockCode: string;
  processCode: string | null;
  stockName: string | null;
  stockDescription: string | null;
  stockSpecifications: string | null;
  priceCompatibleLookupCode: string | null;
  rank: number;
  stockVariants: StockVariant[];
  stockImageUrl: string | null;
  images: StockImage[];
  showAvailableStock: boolean;
  /** Single-item endpoint only. */
  shippingConfigs?: StockShippingConfigSummary[];
  /** ISO country codes; empty means no active shipping configuration. */
  markets: string[];
  badges: string[];
  slug: string;
  seoTitle: string | null;
  seoDescription: string | null;
  priceBands: PriceBand[] | null;
}

export interface StockListQuery {
  page?: number;
  pageSize?: number;
  filter?: string;
  includePricing?: boolean;
  stockSortColumn?: string;
  stockSortDirection?: string;
  variantSortColumn?: string;
  variantSortDirection?: string;
  /** Comma-separated market codes. */
  markets?: string;
  /** Exact, untrimmed match against a stock code or any variant code. */
  code?: string;
  includeArchived?: boolean;
}

export interface StockItemQuery {
  includePricing?: boolean;
  variantSortColumn?: string;
  variantSortDirection?: string;
  includeArchived?: boolean;
}

// ---------------------------------------------------------------- promo codes

export interface PromoValidationResult {
  isValid: boolean;
  promoCode: string;
  description: string | null;
  /** In cents when isFixed, a percentage otherwise. */
  discount: number;
  isFixed: boolean;
  /** An error message when invalid. */
  message: string;
  applicableProcessCodes: string[] | null;
}

// ---------------------------------------------------------------- auth, status, errors

export interface TokenResponse {
  access_token: string;
  /** Seconds. */
  expires_in: number;
  token_type?: string;
}

/**
 * {status_url}/status.json. The spec says only that it "reports the provider's own
 * monitoring for the region"; the body shape is not shown, so everything is optional.
 */
export interface StatusPage {
  status?: string;
  [key: string]: unknown;
}

/** RFC 7807 problem body; every failure carries one. */
export interface ProblemDetails {
  type: string | null;
  title: string | null;
  status: number | null;
  detail: string | null;
  instance: string | null;
  /** A 400 from validation may carry field errors instead. */
  errors?: Record<string, string[]>;
  [key: string]: unknown;
}

/** Error codes: values not shown. */
export interface ValidationMessage {
  errorCode: string;
  message: string;
}

/** A 400 from POST /Jobs may carry this instead of a problem body. */
export interface JobValidationFailure {
  isValid: false;
  validationMessages: ValidationMessage[];
}
