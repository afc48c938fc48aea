/**
 * The default CSV template (docs/manifests.md): which header names exist, where each one lands in
 * the manifest document (job, job.deliveryAddress or item) and how its cells are typed.
 * ERP mappings translate their own columns into these names, so this table is the single
 * place that knows the CSV ↔ manifest correspondence.
 */
import type { SuggestOptions } from '../../core/suggest.js';

/** Where a column's value goes in the document. */
export type ColumnLevel = 'job' | 'address' | 'item';

/**
 * How a cell is typed. `string`: text as written (trimmed). `integer` / `boolean`: converted
 * when the text is unambiguous, otherwise left as the string so schema validation reports it
 * at this row and column. `sizes`: a `S=10;M=20` cell.
 */
export type CellType = 'string' | 'integer' | 'boolean' | 'sizes';

export interface TemplateColumn {
  name: string;
  level: ColumnLevel;
  type: CellType;
  /** Values repeat across rows (codes, countries, methods): keep one copy of each string. */
  intern: boolean;
}

const col = (name: string, level: ColumnLevel, type: CellType = 'string', intern = false): TemplateColumn => ({
  name,
  level,
  type,
  intern,
});

/** In template order: job fields, then delivery address, then item fields. */
export const TEMPLATE_COLUMNS: readonly TemplateColumn[] = [
  col('orderNumber', 'job'),
  col('description', 'job'),
  col('orderComment', 'job'),
  col('dateDue', 'job', 'string', true),
  col('mustDate', 'job', 'boolean'),
  col('timeSensitive', 'job', 'boolean'),
  col('promocode', 'job', 'string', true),
  col('customerUserId', 'job', 'integer'),
  col('orderGroup', 'job'),
  col('orderGroupSequence', 'job', 'integer'),
  col('locationCodeOverride', 'job', 'string', true),
  col('cancel', 'job', 'boolean'),
  col('deliveryMethod', 'address', 'string', true),
  col('shippingInstructions', 'address'),
  col('contactName', 'address'),
  col('organisation', 'address'),
  col('phone', 'address'),
  col('mobile', 'address'),
  col('emailAddress', 'address'),
  col('isSaturdayDelivery', 'address', 'boolean'),
  col('streetAddress', 'address'),
  col('address2', 'address'),
  col('suburb', 'address', 'string', true),
  col('city', 'address', 'string', true),
  col('state', 'address', 'string', true),
  col('stateCode', 'address', 'string', true),
  col('postalCode', 'address', 'string', true),
  col('country', 'address', 'string', true),
  col('countryCodeISO2', 'address', 'string', true),
  col('itemType', 'item', 'string', true),
  col('code', 'item', 'string', true),
  col('quantity', 'item', 'integer'),
  col('customerReference', 'item', 'string', true),
  col('groupHead', 'item', 'string', true),
  col('group', 'item', 'string', true),
  col('externalArtworkUrl', 'item'),
  col('artwork', 'item'),
  col('externalId', 'item'),
  col('isSample', 'item', 'boolean'),
  col('garment', 'item', 'string', true),
  col('comment', 'item'),
  col('variantCode', 'item', 'string', true),
  col('sizeQuantities', 'item', 'sizes'),
];

export const TEMPLATE_BY_NAME: ReadonlyMap<string, TemplateColumn> = new Map(TEMPLATE_COLUMNS.map((c) => [c.name, c]));

/** Prefix of a one-attribute column: `attr:Colors` → item.attributes.Colors (text). */
export const ATTR_PREFIX = 'attr:';
/** Prefix of a one-size column: `size:M` → item.sizeQuantities.M (integer). */
export const SIZE_PREFIX = 'size:';

/** A name of the default template: one of its columns, or an `attr:` or `size:` column. */
export function isTemplateName(name: string): boolean {
  return TEMPLATE_BY_NAME.has(name) || name.startsWith(ATTR_PREFIX) || name.startsWith(SIZE_PREFIX);
}

/**
 * A header every name of which is the default template's: no preset is considered. Here, beside
 * the template, rather than with recognition (mapping/recognise.ts), whose module loads the
 * mapping reader with the yaml package and jsonata: an input of the template needs neither.
 */
export function isTemplateHeader(header: readonly string[]): boolean {
  return header.every((h) => h.trim() === '' || isTemplateName(h.trim()));
}

/** Every name a header (or a mapping target) may use, for suggestions. */
export function templateNames(): string[] {
  return TEMPLATE_COLUMNS.map((c) => c.name);
}

/** Common short forms people put in CSV headers, by their letters and digits (lower case). */
const HEADER_ALIASES: Readonly<Record<string, string>> = {
  qty: 'quantity',
  quantityordered: 'quantity',
  sku: 'code',
  itemcode: 'code',
  assettag: 'code',
  pricecode: 'code',
  type: 'itemType',
  po: 'orderNumber',
  ponumber: 'orderNumber',
  order: 'orderNumber',
  orderno: 'orderNumber',
  duedate: 'dateDue',
  shipvia: 'deliveryMethod',
  shippingmethod: 'deliveryMethod',
  method: 'deliveryMethod',
  zip: 'postalCode',
  zipcode: 'postalCode',
  postcode: 'postalCode',
  address: 'streetAddress',
  address1: 'streetAddress',
  street: 'streetAddress',
  email: 'emailAddress',
  organization: 'organisation',
  company: 'organisation',
  contact: 'contactName',
  name: 'contactName',
  variant: 'variantCode',
  sizes: 'sizeQuantities',
  reference: 'customerReference',
  artworkurl: 'externalArtworkUrl',
  countrycode: 'countryCodeISO2',
  iso2: 'countryCodeISO2',
  province: 'state',
};

/**
 * Suggesting among column names (a mapping's, a header's, a mapping's keys): one name inside
 * another counts (`NAME` for `SHIP_NAME`), since ERP column names add prefixes.
 */
export const COLUMN_NAME_MATCHING: SuggestOptions = { containment: true };

/** Suggesting a template name for a header: also the short forms above (`qty` → `quantity`). */
export const TEMPLATE_NAME_MATCHING: SuggestOptions = { containment: true, aliases: HEADER_ALIASES };
