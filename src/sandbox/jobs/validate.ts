import type {
  DeliveryOption,
  PriceCodeDto,
  ProcessAttribute,
  PromoValidationResult,
  UserProfile,
  ValidationMessage,
} from '../../api/types.js';
import type { AssetRecord } from '../data/assets.js';
import type { ApiContext } from '../handler.js';
import { customSizeCode } from '../data/catalogue.js';
import { findCountry, ORIGIN_CODES, STATES } from '../data/lookups.js';
import { checkPromo } from '../data/promos.js';
import { defaultLocation, type LocationDef } from '../data/regions.js';
import { STOCK } from '../data/stock.js';
import { earliestShipDay, parseRequestDate } from '../dates.js';
import type { CustomerState } from '../state.js';
import type { BoundCandidate, BoundLine } from './binding.js';
import { minimumOf, round2, unitPriceFor } from './pricing.js';

/**
 * Pure validation of a bound job candidate against one customer's catalogue, assets, users
 * and the region's lookups. Two kinds of finding:
 *  - `crashes`: the spec's documented causes of a 500 from POST /Jobs (docs/sandbox.md lists
 *    them, with what "cannot be routed" means). Without validateOnly they become a 500.
 *  - `messages`: a 400 `{isValid:false, validationMessages}`; each names its field path.
 * When there are neither, `plan` carries the priced lines for creation.
 */

export interface PlannedLine {
  quantity: number;
  unitPrice: number;
  /** Setup (new prints) or reset (reorders) charged once for the line. */
  oneOff: number;
  processCode: string | null;
  garment: string | null;
  description: string | null;
  comments: string | null;
  customerReference: string | null;
  needsArtwork: boolean;
  /** A new print's price code: the line files a new asset. */
  priceCode?: PriceCodeDto;
  /** A reorder's asset. */
  asset?: AssetRecord;
  externalId?: string;
}

export interface JobPlan {
  lines: PlannedLine[];
  location: LocationDef;
  dueDay: string;
  user: UserProfile;
  originCode: string;
  delivery: DeliveryOption;
  /** After the promo's discount. */
  totalJobCost: number;
}

const present = (s: string | undefined): s is string => typeof s === 'string' && s.trim() !== '';

/** The two kinds of finding, in the order the checks run. Both add and answer null: `return f.msg(…)`. */
class Findings {
  readonly crashes: string[] = [];
  readonly messages: ValidationMessage[] = [];

  crash(text: string): null {
    this.crashes.push(text);
    return null;
  }

  msg(errorCode: string, message: string): null {
    this.messages.push({ errorCode, message });
    return null;
  }
}

export function validateCandidate(
  c: BoundCandidate,
  ctx: ApiContext,
): { crashes: string[]; messages: ValidationMessage[]; plan: JobPlan | null } {
  const f = new Findings();
  const job = checkJobFields(c, ctx, f);
  const delivery = checkDeliveryAddress(c.deliveryAddress, ctx.customer.region, f);
  const lines = checkLines(c.items ?? [], ctx, f);
  const processes = [...new Set(lines.map((l) => l.processCode).filter((x): x is string => !!x))];
  const promo = checkPromoCode(c.promocode, processes, ctx, f);
  const { crashes, messages } = f;
  if (crashes.length || messages.length || !delivery) return { crashes, messages, plan: null };
  const earliest = earliestShipDay(ctx.now, job.location, processes);
  const dueDay = job.dueRequested && job.dueRequested > earliest ? job.dueRequested : earliest;
  const { dueRequested: _, ...fields } = job;
  return { crashes, messages, plan: { lines, ...fields, dueDay, delivery, totalJobCost: price(lines, promo) } };
}

/** The origin header, an empty job, the location override, the due date and the user. */
function checkJobFields(c: BoundCandidate, ctx: ApiContext, f: Findings) {
  const { customer } = ctx;
  const header = ctx.headers['x-application-name'];
  const origin = Array.isArray(header) ? header[0] : header;
  let originCode = 'API';
  if (origin !== undefined) {
    const hit = ORIGIN_CODES.find((o) => o.toLowerCase() === origin.trim().toLowerCase());
    if (hit) originCode = hit;
    else f.msg('InvalidOriginCode', `X-Application-Name: '${origin}' is not a valid origin code.`);
  }
  if ((c.items ?? []).length === 0) f.crash('items is empty');
  let location = defaultLocation(customer.region);
  if (present(c.locationCodeOverride)) {
    const loc = customer.region.locations.find((l) => l.code === c.locationCodeOverride);
    if (!loc?.active || loc.virtual) {
      f.msg(
        'InvalidLocationCode',
        `locationCodeOverride: '${c.locationCodeOverride}' is not an active, non-virtual location code.`,
      );
    } else location = loc;
  }
  let dueRequested: string | null = null;
  if (!present(c.dateDue)) f.crash('dateDue is missing');
  else {
    dueRequested = parseRequestDate(c.dateDue);
    if (!dueRequested) f.msg('InvalidDateDue', `dateDue: '${c.dateDue}' is not a valid date.`);
  }
  let user = customer.users.find((u) => u.id === ctx.account.userId) as UserProfile;
  if (c.customerUserId !== undefined) {
    const u = customer.users.find((x) => x.id === c.customerUserId);
    if (!u?.active)
      f.msg('InvalidCustomerUser', `customerUserId: ${c.customerUserId} is not an active user of this account.`);
    else user = u;
  }
  return { originCode, location, dueRequested, user };
}

type DeliveryAddress = NonNullable<BoundCandidate['deliveryAddress']>;

function checkDeliveryAddress(
  da: DeliveryAddress | undefined,
  region: CustomerState['region'],
  f: Findings,
): DeliveryOption | undefined {
  if (!da) {
    f.crash('deliveryAddress is missing, so the job cannot be routed');
    return undefined;
  }
  let delivery: DeliveryOption | undefined;
  if (!present(da.deliveryMethod)) f.msg('MissingDeliveryMethod', 'deliveryAddress.deliveryMethod is required.');
  else {
    delivery = region.deliveryOptions.find((o) => o.code === da.deliveryMethod);
    if (!delivery)
      f.msg(
        'InvalidDeliveryMethod',
        `deliveryAddress.deliveryMethod: '${da.deliveryMethod}' is not a valid delivery method code.`,
      );
  }
  const iso = da.countryCodeISO2?.trim();
  const badIso = present(iso) && iso.length !== 2;
  if (badIso) {
    f.msg(
      'InvalidCountryCode',
      `deliveryAddress.countryCodeISO2: '${da.countryCodeISO2}' must be exactly 2 characters (ISO 3166-1 alpha-2).`,
    );
  }
  if (delivery && !delivery.isCollection && !badIso) checkRoutable(da, iso, f);
  return delivery;
}

/** A non-collection delivery needs a known country and the address parts that country uses. */
function checkRoutable(da: DeliveryAddress, iso: string | undefined, f: Findings): void {
  const country = present(iso) ? findCountry(iso) : undefined;
  const missing: string[] = [];
  if (!present(iso)) missing.push('countryCodeISO2');
  else if (!country) missing.push(`a known country (got '${iso}')`);
  if (!present(da.streetAddress)) missing.push('streetAddress');
  if (!present(da.city)) missing.push('city');
  if (country?.hasPostalCode && !present(da.postalCode)) missing.push('postalCode');
  if (country?.hasState && !present(da.state) && !present(da.stateCode)) missing.push('state');
  if (missing.length) f.crash(`deliveryAddress cannot be routed: missing ${missing.join(', ')}`);
  else if (country?.hasState) {
    const states = STATES[country.iso2] ?? [];
    if (present(da.stateCode) && !states.some((s) => s.abbreviation === da.stateCode)) {
      f.msg('InvalidState', `deliveryAddress.stateCode: '${da.stateCode}' is not a state of ${country.iso2}.`);
    }
    if (
      present(da.state) &&
      !states.some((s) => s.abbreviation === da.state || s.name.toLowerCase() === da.state?.toLowerCase())
    ) {
      f.msg('InvalidState', `deliveryAddress.state: '${da.state}' is not a state of ${country.iso2}.`);
    }
  }
}

/** Plans each line by its item type; PriceCode lines supply an artwork URL all or none. */
function checkLines(items: BoundLine[], ctx: ApiContext, f: Findings): PlannedLine[] {
  const planned: PlannedLine[] = [];
  const artworkLines: { index: number; has: boolean }[] = [];
  for (const [index, line] of items.entries()) {
    const p = `items[${index}]`;
    let r: PlannedLine | null = null;
    if (!present(line.itemType)) f.msg('MissingItemType', `${p}.itemType is required.`);
    else if (!present(line.code)) f.msg('MissingCode', `${p}.code is required.`);
    else if (line.itemType === 'PriceCode') {
      artworkLines.push({ index, has: present(line.externalArtworkUrl) });
      r = priceCodeLine(line, p, ctx.customer, f);
    } else if (line.itemType === 'Asset') r = assetLine(line, p, ctx, f);
    else if (line.itemType === 'Stock') r = stockLine(line, p, ctx.customer.region.priceFactor, f);
    else f.msg('UnsupportedItemType', `${p}.itemType: '${line.itemType}' is not a supported item type.`);
    if (r) planned.push(r);
  }
  if (artworkLines.some((l) => l.has)) {
    for (const l of artworkLines.filter((x) => !x.has)) {
      f.msg(
        'MissingArtworkUrl',
        `items[${l.index}].externalArtworkUrl is required: when one PriceCode line supplies an artwork URL, every PriceCode line must.`,
      );
    }
  }
  return planned;
}

/** A promo code is checked against the processes of the planned lines. */
function checkPromoCode(code: string | undefined, processes: string[], ctx: ApiContext, f: Findings) {
  if (!present(code)) return null;
  const r = checkPromo(code, processes, ctx.now.getTime(), ctx.world.startMs);
  return r.isValid ? r : f.msg('InvalidPromoCode', `promocode: '${code}' is not valid: ${r.message}`);
}

/** The total of the lines less the promo's discount (fixed, or a share of the lines of its processes). */
function price(planned: PlannedLine[], promo: PromoValidationResult | null): number {
  const lineTotal = (l: PlannedLine): number => round2(l.quantity * l.unitPrice + l.oneOff);
  const subtotal = round2(planned.reduce((s, l) => s + lineTotal(l), 0));
  let discount = 0;
  if (promo?.isFixed) discount = Math.min(subtotal, promo.discount / 100);
  else if (promo) {
    const base = planned
      .filter((l) => !promo.applicableProcessCodes || promo.applicableProcessCodes.includes(l.processCode ?? ''))
      .reduce((s, l) => s + lineTotal(l), 0);
    discount = round2((base * promo.discount) / 100);
  }
  return round2(subtotal - discount);
}

/** The line's quantity, when there is one of at least 1. */
function quantityOf(line: BoundLine, p: string, f: Findings): number | null {
  if (line.quantity === undefined) return f.msg('MissingQuantity', `${p}.quantity is required.`);
  if (line.quantity < 1) return f.msg('InvalidQuantity', `${p}: quantity ${line.quantity} must be at least 1.`);
  return line.quantity;
}

function priceCodeLine(line: BoundLine, p: string, customer: CustomerState, f: Findings): PlannedLine | null {
  let pc = customer.catalogue.find((x) => x.priceCode === line.code);
  if (!pc) return f.msg('UnknownPriceCode', `${p}.code: price code '${line.code}' does not exist for this account.`);
  // Every check below runs and says what it finds; the line is planned only if none found anything.
  const before = f.messages.length;
  if (!present(line.customerReference))
    f.msg('MissingCustomerReference', `${p}.customerReference is required on PriceCode lines.`);
  if (present(line.externalArtworkUrl) && !/^https?:\/\/[^\s/]+/i.test(line.externalArtworkUrl))
    f.msg('InvalidArtworkUrl', `${p}.externalArtworkUrl: '${line.externalArtworkUrl}' is not an absolute http(s) URL.`);
  const attrs = line.attributes ?? {};
  for (const def of pc.attributes ?? []) {
    const wrong = attributeProblem(def, attrs[def.name ?? ''], `${p}.attributes.${def.name ?? ''}`);
    if (wrong) f.msg(...wrong);
  }
  const dgX = Number(attrs['DG-X']);
  const dgY = Number(attrs['DG-Y']);
  // An unusable custom size has its attribute message already.
  if (pc.hasMetaDataAttributes && Number.isFinite(dgX) && Number.isFinite(dgY) && dgX > 0 && dgY > 0)
    pc = customSizeCode(customer.region, customer.def.tierFactor, { dgX, dgY });
  const isSample = line.isSample === true;
  const quantity = quantityOf(line, p, f);
  if (quantity === null) return null;
  if (isSample && !pc.sampleAvailable)
    f.msg('SampleNotAvailable', `${p}: no sample is available for '${pc.priceCode}'.`);
  if (!isSample && quantity < pc.minimumQuantity)
    f.msg(
      'BelowMinimumQuantity',
      `${p}: quantity ${quantity} is below the minimum quantity ${pc.minimumQuantity} for '${pc.priceCode}'.`,
    );
  if (f.messages.length > before) return null;
  return {
    quantity,
    unitPrice: isSample ? (pc.samplePrice ?? 0) : unitPriceFor(pc.priceBands ?? [], quantity),
    oneOff: isSample ? 0 : (pc.standardSetup ?? 0),
    processCode: pc.processCode,
    garment: null,
    description: pc.description,
    comments: null,
    customerReference: line.customerReference ?? null,
    needsArtwork: !present(line.externalArtworkUrl),
    priceCode: pc,
    externalId: line.externalId,
  };
}

/** What is wrong with an attribute's value, as `[errorCode, message]`; null when nothing is. */
function attributeProblem(def: ProcessAttribute, value: string | undefined, at: string): [string, string] | null {
  if (value === undefined || value === '') return def.required ? ['MissingAttribute', `${at} is required.`] : null;
  switch (def.type) {
    case 'select': {
      const allowed = (def.enumerableValues ?? []).map((e) => e.value);
      return allowed.includes(value)
        ? null
        : ['InvalidAttributeValue', `${at}: '${value}' is not one of ${allowed.map((a) => `'${a}'`).join(', ')}.`];
    }
    case 'text':
      if (def.minLength !== undefined && value.length < def.minLength)
        return ['AttributeTooShort', `${at}: '${value}' is shorter than the minimum length ${def.minLength}.`];
      if (def.maxLength !== undefined && value.length > def.maxLength)
        return ['AttributeTooLong', `${at}: length ${value.length} exceeds the maximum length ${def.maxLength}.`];
      return null;
    case 'int':
    case 'decimal': {
      const n = Number(value);
      const shape = def.type === 'int' ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
      if (!shape.test(value.trim()) || !Number.isFinite(n))
        return ['InvalidAttributeValue', `${at}: '${value}' is not ${def.type === 'int' ? 'an integer' : 'a number'}.`];
      if ((def.minValue !== undefined && n < def.minValue) || (def.maxValue !== undefined && n > def.maxValue))
        return [
          'AttributeOutOfRange',
          `${at}: ${value} is outside the range ${def.minValue ?? '-∞'}..${def.maxValue ?? '∞'}.`,
        ];
      return null;
    }
    default:
      return null;
  }
}

function assetLine(line: BoundLine, p: string, ctx: ApiContext, f: Findings): PlannedLine | null {
  const asset = ctx.world.findAsset(ctx.customer, line.code as string);
  if (!asset) return f.crash(`${p}.code: asset '${line.code}' does not exist`);
  if (asset.isArchived)
    return f.msg('AssetNotOrderable', `${p}.code: asset '${asset.assetTag}' is not in an orderable state (archived).`);
  const quantity = quantityOf(line, p, f);
  if (quantity === null) return null;
  const minimum = minimumOf(asset.priceBands);
  if (quantity < minimum)
    return f.msg(
      'BelowMinimumQuantity',
      `${p}: quantity ${quantity} is below the minimum quantity ${minimum} for asset '${asset.assetTag}'.`,
    );
  return {
    quantity,
    unitPrice: unitPriceFor(asset.priceBands, quantity),
    oneOff: asset.reset,
    processCode: asset.processCode,
    garment: line.garment ?? asset.garment,
    description: asset.description,
    comments: line.comment ?? null,
    customerReference: line.customerReference ?? null,
    needsArtwork: false,
    asset,
  };
}

function stockLine(line: BoundLine, p: string, factor: number, f: Findings): PlannedLine | null {
  const stock = STOCK.find((s) => s.item.stockCode === line.code && !s.hidden);
  if (!stock) return f.msg('UnknownStockCode', `${p}.code: stock code '${line.code}' does not exist.`);
  if (stock.archived) return f.msg('StockNotOrderable', `${p}.code: stock item '${line.code}' is archived.`);
  if (!present(line.variantCode)) return f.msg('MissingVariantCode', `${p}.variantCode is required on Stock lines.`);
  const variant = stock.item.stockVariants.find((v) => v.variantCode === line.variantCode);
  if (!variant)
    return f.msg('UnknownVariantCode', `${p}.variantCode: '${line.variantCode}' is not a variant of '${line.code}'.`);
  const sizes = line.sizeQuantities ?? {};
  const keys = Object.keys(sizes);
  if (keys.length === 0) return f.msg('MissingSizeQuantities', `${p}.sizeQuantities is required on Stock lines.`);
  const run = variant.sizesCsv.split(',');
  const outside = keys.filter((k) => !run.includes(k));
  if (outside.length)
    return f.crash(
      `${p}.sizeQuantities: size ${outside.map((k) => `'${k}'`).join(', ')} is not in the size run of '${variant.variantCode}'`,
    );
  if (keys.some((k) => sizes[k] < 0))
    return f.msg('InvalidQuantity', `${p}.sizeQuantities: quantities must not be negative.`);
  const quantity = keys.reduce((s, k) => s + sizes[k], 0);
  if (quantity < 1) return f.msg('InvalidQuantity', `${p}.sizeQuantities: the total quantity must be at least 1.`);
  const bands = stock.basePriceBands.map((b) => ({ ...b, unitPrice: round2(b.unitPrice * factor) }));
  return {
    quantity,
    unitPrice: unitPriceFor(bands, quantity),
    oneOff: 0,
    processCode: stock.item.processCode,
    garment: variant.variantCode,
    description: `${stock.item.stockName} (${keys.map((k) => `${k}×${sizes[k]}`).join(', ')})`,
    comments: null,
    customerReference: line.customerReference ?? null,
    needsArtwork: false,
  };
}
