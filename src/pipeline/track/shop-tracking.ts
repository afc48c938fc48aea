/**
 * Pure: the tracking of despatched jobs as the rows of a file a shop imports to mark its orders
 * shipped (docs/track.md#tracking-back-to-the-shop). One record per job and tracking number;
 * one row per record and shop line (SKU) where the platform's import takes lines, else per record.
 */
import { stringify } from 'csv-stringify/sync';
import { neutraliseCell } from '../../report/neutralise.js';

/** One despatched job's tracking, keyed by the shop's own order number. */
export interface DispatchRecord {
  /** The order number htorder sent (the ledger's key). */
  orderNumber: string;
  /** The shop's own order number, as its export wrote it (`#1041`); the order number when not from a shop. */
  shopOrderNumber: string;
  jobNumber: number;
  /** The carrier, from the job's delivery option (`UPS`); empty when unknown. */
  carrier: string;
  trackingNumber: string;
  trackingLink: string;
  /** The despatch date, `YYYY-MM-DD` (UTC). */
  despatchDate: string;
  /** The shop lines the job came from (SKU and quantity); empty when it came from none. */
  lines: Array<{ sku: string; quantity: string }>;
}

/** The column layouts a tracking file is written in. */
export const TRACKING_LAYOUTS = ['shopify', 'woocommerce', 'generic'] as const;
export type TrackingLayout = (typeof TRACKING_LAYOUTS)[number];

/** The layout of a shop's import for the preset its export was read through; generic for every other input. */
export function layoutFor(preset: string | undefined): TrackingLayout {
  return preset === 'shopify' || preset === 'woocommerce' ? preset : 'generic';
}

type Line = DispatchRecord['lines'][number];

/**
 * A row per record and SKU (a record with no lines: one row, its SKU blank). Lines of one SKU
 * are one row with their quantities added: the imports match a row to the order's line by its
 * SKU, so a repeated SKU would be a second shipment of the same line.
 */
function perLine(records: readonly DispatchRecord[]): Array<[DispatchRecord, Line]> {
  return records.flatMap((r) =>
    r.lines.length === 0
      ? [[r, { sku: '', quantity: '' }] as [DispatchRecord, Line]]
      : bySku(r.lines).map((l) => [r, l] as [DispatchRecord, Line]),
  );
}

/** Lines of one SKU folded into one, in the order SKUs first appear; quantities added when each is a whole number. */
export function bySku(lines: readonly Line[]): Line[] {
  const out = new Map<string, Line>();
  for (const line of lines) {
    const seen = out.get(line.sku);
    if (seen === undefined) out.set(line.sku, { ...line });
    else seen.quantity = addQuantities(seen.quantity, line.quantity);
  }
  return [...out.values()];
}

const WHOLE = /^\d{1,9}$/;

/** `6` + `4` → `10`; a quantity that is not a plain whole number leaves the sum blank (the whole line). */
function addQuantities(a: string, b: string): string {
  return WHOLE.test(a) && WHOLE.test(b) ? String(Number(a) + Number(b)) : '';
}

/** What a shop's import is asked to do besides recording the tracking. */
export interface TrackingFileOptions {
  /** Shopify (Matrixify): email each customer their tracking (`Fulfillment: Send Receipt`). */
  sendReceipt: boolean;
}

const DEFAULT_FILE_OPTIONS: TrackingFileOptions = { sendReceipt: true };

/** `2026-11-21` → `21-11-2026`, the day-first format the WooCommerce import is told to expect. */
function dayFirst(iso: string): string {
  const [y, m, d] = iso.split('-');
  return y && m && d ? `${d}-${m}-${y}` : iso;
}

/**
 * The header and rows of a tracking file (docs/track.md#tracking-back-to-the-shop cites each
 * import's documentation):
 * - `shopify`: the Orders sheet of the Matrixify import app, updating each order (`Command`
 *   UPDATE, matched by `Name`) with a `Fulfillment Line` per SKU, its status `success`, tracking
 *   company, number and URL, and `Fulfillment: Send Receipt` (Matrixify's default is FALSE: no
 *   email to the customer);
 * - `woocommerce`: the CSV import of the Advanced Shipment Tracking plugin (order_id,
 *   tracking_provider, tracking_number, date_shipped as DD-MM-YYYY, status_shipped 1 = shipped,
 *   sku and qty for tracking per item);
 * - `generic`: every field by its own name, for any other shop or a script.
 */
export function trackingRows(
  layout: TrackingLayout,
  records: readonly DispatchRecord[],
  options: TrackingFileOptions = DEFAULT_FILE_OPTIONS,
): string[][] {
  switch (layout) {
    case 'shopify':
      return [
        [
          'Name',
          'Command',
          'Line: Type',
          'Line: SKU',
          'Line: Quantity',
          'Fulfillment: Status',
          'Fulfillment: Tracking Company',
          'Fulfillment: Tracking Number',
          'Fulfillment: Tracking URL',
          'Fulfillment: Processed At',
          'Fulfillment: Send Receipt',
        ],
        ...perLine(records).map(([r, l]) => [
          r.shopOrderNumber,
          'UPDATE',
          'Fulfillment Line',
          l.sku,
          l.quantity,
          'success',
          r.carrier,
          r.trackingNumber,
          r.trackingLink,
          r.despatchDate,
          options.sendReceipt ? 'TRUE' : 'FALSE',
        ]),
      ];
    case 'woocommerce':
      return [
        ['order_id', 'tracking_provider', 'tracking_number', 'date_shipped', 'status_shipped', 'sku', 'qty'],
        ...perLine(records).map(([r, l]) => [
          r.shopOrderNumber,
          r.carrier,
          r.trackingNumber,
          dayFirst(r.despatchDate),
          '1',
          l.sku,
          l.quantity,
        ]),
      ];
    case 'generic':
      return [
        [
          'shop_order',
          'sku',
          'quantity',
          'carrier',
          'tracking_number',
          'tracking_url',
          'despatch_date',
          'order_number',
          'job_number',
        ],
        ...perLine(records).map(([r, l]) => [
          r.shopOrderNumber,
          l.sku,
          l.quantity,
          r.carrier,
          r.trackingNumber,
          r.trackingLink,
          r.despatchDate,
          r.orderNumber,
          String(r.jobNumber),
        ]),
      ];
  }
}

/**
 * The file's text: UTF-8, CRLF (what spreadsheet imports expect), every cell guarded against
 * formulas. A cell holding a lone LF or CR is quoted too: with a CRLF record delimiter
 * csv-stringify quotes only CRLF, and an unquoted line break starts a new row.
 */
export function trackingCsv(
  layout: TrackingLayout,
  records: readonly DispatchRecord[],
  options: TrackingFileOptions = DEFAULT_FILE_OPTIONS,
): string {
  const [header, ...rows] = trackingRows(layout, records, options);
  return stringify([header, ...rows.map((row) => row.map(neutraliseCell))], {
    record_delimiter: 'windows',
    quoted_match: /[\r\n]/,
  });
}

/** Carriers a delivery option's label may start with: the name a shop's import knows them by. */
const CARRIERS = [
  'UPS',
  'USPS',
  'FedEx',
  'DHL Express',
  'DHL',
  'Canada Post',
  'Australia Post',
  'NZ Post',
  'Royal Mail',
  'Purolator',
  'OnTrac',
  'Aramex',
];

/**
 * The carrier of a delivery option, from its label: `UPS Ground` → UPS, `FedEx Overnight` →
 * FedEx; a label naming no known carrier is the carrier as it is (`NZ Courier`). Empty for a
 * collection (nothing is carried).
 */
export function carrierOf(label: string | undefined, isCollection = false): string {
  if (label === undefined || isCollection) return '';
  const text = label.trim();
  const known = CARRIERS.find(
    (c) => text.toLowerCase() === c.toLowerCase() || text.toLowerCase().startsWith(`${c.toLowerCase()} `),
  );
  return known ?? text;
}
