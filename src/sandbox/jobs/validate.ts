import type {
  DeliveryOption,
  PriceBand,
  PriceCodeDto,
  ProcessAttribute,
  UserProfile,
  ValidationMessage,
} from '../../api/types.js';
import type { AssetRecord } from '../data/assets.js';
import { customSizeCode } from '../data/catalogue.js';
import { findCountry, ORIGIN_CODES, STATES } from '../data/lookups.js';
import { defaultLocation, type LocationDef } from '../data/regions.js';
import { STOCK, type StockRecord } from '../data/stock.js';
import { parseRequestDate } from '../dates.js';
import { checkPromo, promoProcesses } from '../promo-check.js';
import { earliestShipDay } from '../ship-date.js';
import type { CustomerState } from '../state.js';
import type { BoundCandidate, BoundLine } from './binding.js';
import { minimumOf, round2, unitPriceFor } from './pricing.js';

/**
 * Pure validation of a bound job candidate against one customer's catalogue, assets,
 * users and the region's lookups. Two kinds of finding:
 *  - `crashes`: the spec's documented causes of a 500 from POST /Jobs (empty items, a
 *    delivery address that cannot be routed, an unknown asset code, a missing dateDue, a
 *    size key outside the variant's size run). Without validateOnly they become a 500.
 *  - `messages`: a 400 `{isValid:false, validationMessages}`; each names its field path.
 * When there are neither, `plan` carries the priced lines for creation.
 *
 * "Cannot be routed" means: a non-collection delivery method and no countryCodeISO2, an
 * unknown two-letter country, or a missing streetAddress, city, postalCode (where the
 * country has postal codes) or state (where the country has states).
 */

export interface PlannedLine {
  index: number;
  itemType: 'PriceCode' | 'Asset' | 'Stock';
  code: string;
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
  priceCode?: PriceCodeDto;
  asset?: AssetRecord;
  externalId?: string;
  isSample: boolean;
}

export interface JobPlan {
  lines: PlannedLine[];
  location: LocationDef;
  dueDay: string;
  user: UserProfile;
  originCode: string;
  delivery: DeliveryOption;
  /** Before discount. */
  subtotal: number;
  discount: number;
  totalJobCost: number;
}

export interface Verdict {
  crashes: string[];
  messages: ValidationMessage[];
  plan: JobPlan | null;
}

export interface ValidationContext {
  customer: CustomerState;
  findAsset(tag: string): AssetRecord | undefined;
  /** Calling credential's user id: the default customerUserId. */
  callerUserId: number;
  /** Raw X-Application-Name header; undefined means the default `API`. */
  originHeader: string | undefined;
  now: Date;
  clockStartMs: number;
}

const present = (s: string | undefined): s is string => typeof s === 'string' && s.trim() !== '';

/** The two kinds of finding, gathered in the order the checks run. */
interface Findings {
  crashes: string[];
  msg: Msg;
}

interface Promo {
  discount: number;
  isFixed: boolean;
  processes: string[] | null;
}

export function validateCandidate(c: BoundCandidate, ctx: ValidationContext): Verdict {
  const messages: ValidationMessage[] = [];
  const msg: Msg = (errorCode, message) => {
    messages.push({ errorCode, message });
  };
  const f: Findings = { crashes: [], msg };
  const job = checkJobFields(c, ctx, f);
  const delivery = checkDeliveryAddress(c.deliveryAddress, ctx.customer.region, f);
  const planned = checkLines(c.items ?? [], ctx, f);
  const processes = [...new Set(planned.map((l) => l.processCode).filter((x): x is string => !!x))];
  const promo = checkPromoCode(c.promocode, processes, ctx, f);
  if (f.crashes.length || messages.length || !delivery) return { crashes: f.crashes, messages, plan: null };
  const earliest = earliestShipDay(ctx.now, job.location, processes);
  const dueDay = job.dueRequested && job.dueRequested > earliest ? job.dueRequested : earliest;
  const { dueRequested: _, ...fields } = job;
  return {
    crashes: f.crashes,
    messages,
    plan: { lines: planned, ...fields, dueDay, delivery, ...price(planned, promo) },
  };
}

/** The origin header, an empty job, the location override, the due date and the user. */
function checkJobFields(c: BoundCandidate, ctx: ValidationContext, { crashes, msg }: Findings) {
  const { customer } = ctx;
  let originCode = 'API';
  if (ctx.originHeader !== undefined) {
    const hit = ORIGIN_CODES.find((o) => o.toLowerCase() === ctx.originHeader?.trim().toLowerCase());
    if (hit) originCode = hit;
    else msg('InvalidOriginCode', `X-Application-Name: '${ctx.originHeader}' is not a valid origin code.`);
  }
  if ((c.items ?? []).length === 0) crashes.push('items is empty');
  let location = defaultLocation(customer.region);
  if (present(c.locationCodeOverride)) {
    const loc = customer.region.locations.find((l) => l.code === c.locationCodeOverride);
    if (!loc?.active || loc.virtual) {
      msg(
        'InvalidLocationCode',
        `locationCodeOverride: '${c.locationCodeOverride}' is not an active, non-virtual location code.`,
      );
    } else location = loc;
  }
  let dueRequested: string | null = null;
  if (!present(c.dateDue)) crashes.push('dateDue is missing');
  else {
    dueRequested = parseRequestDate(c.dateDue);
    if (!dueRequested) msg('InvalidDateDue', `dateDue: '${c.dateDue}' is not a valid date.`);
  }
  let user = customer.users.find((u) => u.id === ctx.callerUserId) as UserProfile;
  if (c.customerUserId !== undefined) {
    const u = customer.users.find((x) => x.id === c.customerUserId);
    if (!u?.active)
      msg('InvalidCustomerUser', `customerUserId: ${c.customerUserId} is not an active user of this account.`);
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
  const { msg } = f;
  if (!da) {
    f.crashes.push('deliveryAddress is missing, so the job cannot be routed');
    return undefined;
  }
  let delivery: DeliveryOption | undefined;
  if (!present(da.deliveryMethod)) msg('MissingDeliveryMethod', 'deliveryAddress.deliveryMethod is required.');
  else {
    delivery = region.deliveryOptions.find((o) => o.code === da.deliveryMethod);
    if (!delivery)
      msg(
        'InvalidDeliveryMethod',
        `deliveryAddress.deliveryMethod: '${da.deliveryMethod}' is not a valid delivery method code.`,
      );
  }
  const iso = da.countryCodeISO2?.trim();
  const badIso = present(iso) && iso.length !== 2;
  if (badIso) {
    msg(
      'InvalidCountryCode',
      `deliveryAddress.countryCodeISO2: '${da.countryCodeISO2}' must be exactly 2 characters (ISO 3166-1 alpha-2).`,
    );
  }
  if (delivery && !delivery.isCollection && !badIso) checkRoutable(da, iso, f);
  return delivery;
}

/** A non-collection delivery needs a known country and the address parts that country uses. */
function checkRoutable(da: DeliveryAddress, iso: string | undefined, { crashes, msg }: Findings): void {
  const country = present(iso) ? findCountry(iso) : undefined;
  const missing: string[] = [];
  if (!present(iso)) missing.push('countryCodeISO2');
  else if (!country) missing.push(`a known country (got '${iso}')`);
  if (!present(da.streetAddress)) missing.push('streetAddress');
  if (!present(da.city)) missing.push('city');
  if (country?.hasPostalCode && !present(da.postalCode)) missing.push('postalCode');
  if (country?.hasState && !present(da.state) && !present(da.stateCode)) missing.push('state');
  if (missing.length) crashes.push(`deliveryAddress cannot be routed: missing ${missing.join(', ')}`);
  else if (country?.hasState) {
    const states = STATES[country.iso2] ?? [];
    if (present(da.stateCode) && !states.some((s) => s.abbreviation === da.stateCode)) {
      msg('InvalidState', `deliveryAddress.stateCode: '${da.stateCode}' is not a state of ${country.iso2}.`);
    }
    if (
      present(da.state) &&
      !states.some((s) => s.abbreviation === da.state || s.name.toLowerCase() === da.state?.toLowerCase())
    ) {
      msg('InvalidState', `deliveryAddress.state: '${da.state}' is not a state of ${country.iso2}.`);
    }
  }
}

/** Plans each line by its item type; PriceCode lines supply an artwork URL all or none. */
function checkLines(items: BoundLine[], ctx: ValidationContext, { crashes, msg }: Findings): PlannedLine[] {
  const planned: PlannedLine[] = [];
  const artworkLines: { index: number; has: boolean }[] = [];
  for (const [index, line] of items.entries()) {
    const p = `items[${index}]`;
    let r: UnnumberedLine | null = null;
    if (!present(line.itemType)) msg('MissingItemType', `${p}.itemType is required.`);
    else if (!present(line.code)) msg('MissingCode', `${p}.code is required.`);
    else if (line.itemType === 'PriceCode') {
      artworkLines.push({ index, has: present(line.externalArtworkUrl) });
      r = priceCodeLine(line, p, ctx.customer, msg);
    } else if (line.itemType === 'Asset') r = assetLine(line, p, ctx, crashes, msg);
    else if (line.itemType === 'Stock') r = stockLine(line, p, ctx.customer.region.priceFactor, crashes, msg);
    else msg('UnsupportedItemType', `${p}.itemType: '${line.itemType}' is not a supported item type.`);
    if (r) planned.push({ ...r, index });
  }
  if (artworkLines.some((l) => l.has)) {
    for (const l of artworkLines.filter((x) => !x.has)) {
      msg(
        'MissingArtworkUrl',
        `items[${l.index}].externalArtworkUrl is required: when one PriceCode line supplies an artwork URL, every PriceCode line must.`,
      );
    }
  }
  return planned;
}

/** A promo code is checked against the processes of the planned lines. */
function checkPromoCode(
  code: string | undefined,
  processes: string[],
  ctx: ValidationContext,
  { msg }: Findings,
): Promo | null {
  if (!present(code)) return null;
  const r = checkPromo(code, processes, ctx.now.getTime(), ctx.clockStartMs);
  if (r.isValid) return { discount: r.discount, isFixed: r.isFixed, processes: promoProcesses(code) };
  msg('InvalidPromoCode', `promocode: '${code}' is not valid: ${r.message}`);
  return null;
}

/** The subtotal of the lines, the promo's discount (fixed, or a share of its processes' lines) and the total. */
function price(planned: PlannedLine[], promo: Promo | null): Pick<JobPlan, 'subtotal' | 'discount' | 'totalJobCost'> {
  const lineTotal = (l: PlannedLine): number => round2(l.quantity * l.unitPrice + l.oneOff);
  const subtotal = round2(planned.reduce((s, l) => s + lineTotal(l), 0));
  let discount = 0;
  if (promo?.isFixed) discount = Math.min(subtotal, promo.discount / 100);
  else if (promo) {
    const base = planned
      .filter((l) => !promo.processes || promo.processes.includes(l.processCode ?? ''))
      .reduce((s, l) => s + lineTotal(l), 0);
    discount = round2((base * promo.discount) / 100);
  }
  return { subtotal, discount, totalJobCost: round2(subtotal - discount) };
}

type Msg = (errorCode: string, message: string) => void;
/** A planned line before it is numbered: each item kind's checker makes one, the caller adds `index`. */
type UnnumberedLine = Omit<PlannedLine, 'index'>;

function quantityOk(line: BoundLine, p: string, msg: Msg): line is BoundLine & { quantity: number } {
  if (line.quantity === undefined) {
    msg('MissingQuantity', `${p}.quantity is required.`);
    return false;
  }
  if (line.quantity < 1) {
    msg('InvalidQuantity', `${p}: quantity ${line.quantity} must be at least 1.`);
    return false;
  }
  return true;
}

function priceCodeLine(line: BoundLine, p: string, customer: CustomerState, msg: Msg): UnnumberedLine | null {
  let pc = customer.catalogue.find((x) => x.priceCode === line.code);
  if (!pc) {
    msg('UnknownPriceCode', `${p}.code: price code '${line.code}' does not exist for this account.`);
    return null;
  }
  let ok = true;
  if (!present(line.customerReference)) {
    msg('MissingCustomerReference', `${p}.customerReference is required on PriceCode lines.`);
    ok = false;
  }
  if (present(line.externalArtworkUrl) && !/^https?:\/\/[^\s/]+/i.test(line.externalArtworkUrl)) {
    msg('InvalidArtworkUrl', `${p}.externalArtworkUrl: '${line.externalArtworkUrl}' is not an absolute http(s) URL.`);
    ok = false;
  }
  const attrs = line.attributes ?? {};
  for (const def of pc.attributes ?? []) ok = checkAttribute(def, attrs, p, msg) && ok;
  if (pc.hasMetaDataAttributes) {
    const dgX = Number(attrs['DG-X']);
    const dgY = Number(attrs['DG-Y']);
    if (Number.isFinite(dgX) && Number.isFinite(dgY) && dgX > 0 && dgY > 0) {
      pc = customSizeCode(customer.region, customer.def.tierFactor, { dgX, dgY });
    } else ok = false;
  }
  const isSample = line.isSample === true;
  if (!quantityOk(line, p, msg)) return null;
  if (isSample && !pc.sampleAvailable) {
    msg('SampleNotAvailable', `${p}: no sample is available for '${pc.priceCode}'.`);
    ok = false;
  }
  if (!isSample && line.quantity < pc.minimumQuantity) {
    msg(
      'BelowMinimumQuantity',
      `${p}: quantity ${line.quantity} is below the minimum quantity ${pc.minimumQuantity} for '${pc.priceCode}'.`,
    );
    ok = false;
  }
  if (!ok) return null;
  const unitPrice = isSample ? (pc.samplePrice ?? 0) : unitPriceFor(pc.priceBands ?? [], line.quantity);
  return {
    itemType: 'PriceCode',
    code: line.code as string,
    quantity: line.quantity,
    unitPrice,
    oneOff: isSample ? 0 : (pc.standardSetup ?? 0),
    processCode: pc.processCode,
    garment: null,
    description: pc.description,
    comments: null,
    customerReference: line.customerReference ?? null,
    needsArtwork: !present(line.externalArtworkUrl),
    priceCode: pc,
    externalId: line.externalId,
    isSample,
  };
}

function checkAttribute(def: ProcessAttribute, attrs: Record<string, string>, p: string, msg: Msg): boolean {
  const name = def.name ?? '';
  const value = attrs[name];
  const at = `${p}.attributes.${name}`;
  if (value === undefined || value === '') {
    if (def.required) {
      msg('MissingAttribute', `${at} is required.`);
      return false;
    }
    return true;
  }
  switch (def.type) {
    case 'select': {
      const allowed = (def.enumerableValues ?? []).map((e) => e.value);
      if (!allowed.includes(value)) {
        msg('InvalidAttributeValue', `${at}: '${value}' is not one of ${allowed.map((a) => `'${a}'`).join(', ')}.`);
        return false;
      }
      return true;
    }
    case 'text': {
      if (def.minLength !== undefined && value.length < def.minLength) {
        msg('AttributeTooShort', `${at}: '${value}' is shorter than the minimum length ${def.minLength}.`);
        return false;
      }
      if (def.maxLength !== undefined && value.length > def.maxLength) {
        msg('AttributeTooLong', `${at}: length ${value.length} exceeds the maximum length ${def.maxLength}.`);
        return false;
      }
      return true;
    }
    case 'int':
    case 'decimal': {
      const n = Number(value);
      const shape = def.type === 'int' ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
      if (!shape.test(value.trim()) || !Number.isFinite(n)) {
        msg('InvalidAttributeValue', `${at}: '${value}' is not ${def.type === 'int' ? 'an integer' : 'a number'}.`);
        return false;
      }
      if ((def.minValue !== undefined && n < def.minValue) || (def.maxValue !== undefined && n > def.maxValue)) {
        msg(
          'AttributeOutOfRange',
          `${at}: ${value} is outside the range ${def.minValue ?? '-∞'}..${def.maxValue ?? '∞'}.`,
        );
        return false;
      }
      return true;
    }
    default:
      return true;
  }
}

function assetLine(
  line: BoundLine,
  p: string,
  ctx: ValidationContext,
  crashes: string[],
  msg: Msg,
): UnnumberedLine | null {
  const asset = ctx.findAsset(line.code as string);
  if (!asset) {
    crashes.push(`${p}.code: asset '${line.code}' does not exist`);
    return null;
  }
  if (asset.isArchived) {
    msg('AssetNotOrderable', `${p}.code: asset '${asset.assetTag}' is not in an orderable state (archived).`);
    return null;
  }
  if (!quantityOk(line, p, msg)) return null;
  const minimum = minimumOf(asset.priceBands);
  if (line.quantity < minimum) {
    msg(
      'BelowMinimumQuantity',
      `${p}: quantity ${line.quantity} is below the minimum quantity ${minimum} for asset '${asset.assetTag}'.`,
    );
    return null;
  }
  return {
    itemType: 'Asset',
    code: asset.assetTag as string,
    quantity: line.quantity,
    unitPrice: unitPriceFor(asset.priceBands, line.quantity),
    oneOff: asset.reset,
    processCode: asset.processCode,
    garment: line.garment ?? asset.garment,
    description: asset.description,
    comments: line.comment ?? null,
    customerReference: line.customerReference ?? null,
    needsArtwork: false,
    asset,
    isSample: false,
  };
}

function stockLine(line: BoundLine, p: string, factor: number, crashes: string[], msg: Msg): UnnumberedLine | null {
  const stock: StockRecord | undefined = STOCK.find((s) => s.item.stockCode === line.code && !s.hidden);
  if (!stock) {
    msg('UnknownStockCode', `${p}.code: stock code '${line.code}' does not exist.`);
    return null;
  }
  if (stock.archived) {
    msg('StockNotOrderable', `${p}.code: stock item '${line.code}' is archived.`);
    return null;
  }
  if (!present(line.variantCode)) {
    msg('MissingVariantCode', `${p}.variantCode is required on Stock lines.`);
    return null;
  }
  const variant = stock.item.stockVariants.find((v) => v.variantCode === line.variantCode);
  if (!variant) {
    msg('UnknownVariantCode', `${p}.variantCode: '${line.variantCode}' is not a variant of '${line.code}'.`);
    return null;
  }
  const sizes = line.sizeQuantities ?? {};
  const keys = Object.keys(sizes);
  if (keys.length === 0) {
    msg('MissingSizeQuantities', `${p}.sizeQuantities is required on Stock lines.`);
    return null;
  }
  const run = variant.sizesCsv.split(',');
  const outside = keys.filter((k) => !run.includes(k));
  if (outside.length) {
    crashes.push(
      `${p}.sizeQuantities: size ${outside.map((k) => `'${k}'`).join(', ')} is not in the size run of '${variant.variantCode}'`,
    );
    return null;
  }
  if (keys.some((k) => sizes[k] < 0)) {
    msg('InvalidQuantity', `${p}.sizeQuantities: quantities must not be negative.`);
    return null;
  }
  const quantity = keys.reduce((s, k) => s + sizes[k], 0);
  if (quantity < 1) {
    msg('InvalidQuantity', `${p}.sizeQuantities: the total quantity must be at least 1.`);
    return null;
  }
  const bands: PriceBand[] = stock.basePriceBands.map((b) => ({ ...b, unitPrice: round2(b.unitPrice * factor) }));
  return {
    itemType: 'Stock',
    code: stock.item.stockCode,
    quantity,
    unitPrice: unitPriceFor(bands, quantity),
    oneOff: 0,
    processCode: stock.item.processCode,
    garment: variant.variantCode,
    description: `${stock.item.stockName} (${keys.map((k) => `${k}×${sizes[k]}`).join(', ')})`,
    comments: null,
    customerReference: line.customerReference ?? null,
    needsArtwork: false,
    isSample: false,
  };
}
