import { seeded } from './seeded-random.js';

/**
 * The files of the nights simulation (nights.ts), made from a seed: a Shopify store's order
 * export that grows night after night (every earlier order again, plus tonight's), a recurring
 * reorder under a new order number each night, its accidental re-send, a file over maxJobCost
 * and a broken file. The same seed gives the same bytes on every machine.
 */

/** The header of Shopify's "Export orders" CSV, as the store writes it (samples/shopify). */
const SHOPIFY_HEADER = [
  'Name',
  'Email',
  'Financial Status',
  'Paid at',
  'Fulfillment Status',
  'Fulfilled at',
  'Accepts Marketing',
  'Currency',
  'Subtotal',
  'Shipping',
  'Taxes',
  'Total',
  'Discount Code',
  'Discount Amount',
  'Shipping Method',
  'Created at',
  'Lineitem quantity',
  'Lineitem name',
  'Lineitem price',
  'Lineitem compare at price',
  'Lineitem sku',
  'Lineitem requires shipping',
  'Lineitem taxable',
  'Lineitem fulfillment status',
  'Billing Name',
  'Billing Street',
  'Billing Address1',
  'Billing Address2',
  'Billing Company',
  'Billing City',
  'Billing Zip',
  'Billing Province',
  'Billing Country',
  'Billing Phone',
  'Shipping Name',
  'Shipping Street',
  'Shipping Address1',
  'Shipping Address2',
  'Shipping Company',
  'Shipping City',
  'Shipping Zip',
  'Shipping Province',
  'Shipping Country',
  'Shipping Phone',
  'Notes',
  'Note Attributes',
  'Cancelled at',
  'Payment Method',
  'Payment Reference',
  'Refunded Amount',
  'Vendor',
  'Outstanding Balance',
  'Employee',
  'Location',
  'Device ID',
  'Id',
  'Tags',
  'Risk Level',
  'Source',
];

/** US cities with their state and a real ZIP code: addresses the sandbox routes. */
const CITIES: readonly (readonly [string, string, string])[] = [
  ['Boston', 'MA', '02134'],
  ['Austin', 'TX', '78701'],
  ['Denver', 'CO', '80202'],
  ['Seattle', 'WA', '98101'],
  ['Portland', 'OR', '97204'],
  ['Chicago', 'IL', '60601'],
  ['Atlanta', 'GA', '30303'],
  ['Phoenix', 'AZ', '85004'],
  ['Columbus', 'OH', '43215'],
  ['Madison', 'WI', '53703'],
];
const FIRST = ['Ann', 'Luis', 'Mia', 'Sam', 'Noor', 'Eli', 'Kai', 'Rosa', 'Ivan', 'Jo', 'Tess', 'Omar'];
const LAST = ['Lee', 'Ortega', 'Park', 'Novak', 'Haddad', 'Brandt', 'Okafor', 'Silva', 'Kerr', 'Moss'];
const STREETS = ['Elm St', 'Congress Ave', 'Pine St', 'Main St', 'Oak Ave', 'Lake Dr', 'Hill Rd', 'Mill Ln'];
/** Goods the sandbox's demo account stocks: a tee by colour and size, and a transfer (asset A10001) by size. */
const TEES = ['GD5000-BLK', 'GD5000-WHT'];
const SIZES = ['S', 'M', 'L', 'XL'];

export interface ShopLine {
  sku: string;
  name: string;
  quantity: number;
  price: string;
}

export interface ShopOrder {
  /** The shop's order name, `#1001`: htorder's order number. */
  name: string;
  night: number;
  email: string;
  contact: string;
  street: string;
  city: string;
  state: string;
  zip: string;
  lines: ShopLine[];
  /** A fee line (no SKU): left out by the preset's skip rule. */
  fee: boolean;
  /** Cancelled in the store before the export: the whole order is skipped. */
  cancelled: boolean;
}

/** What the night's files hold, so the simulation knows what must be created and what must wait. */
export interface NightFile {
  name: string;
  text: string;
  /** The order numbers in it. */
  orders: string[];
}

const csvCell = (v: string): string => (/[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
const csvLine = (cells: readonly string[]): string => `${cells.map(csvCell).join(',')}\n`;

/** The recurring reorder's content: the same shop address and items every night. */
const REORDER = {
  contact: 'Dana Shop',
  organisation: 'Tigers Merch',
  street: '12 Elm St',
  city: 'Boston',
  state: 'MA',
  zip: '02134',
};
const TEMPLATE_HEADER = [
  'orderNumber',
  'description',
  'deliveryMethod',
  'contactName',
  'organisation',
  'streetAddress',
  'city',
  'state',
  'postalCode',
  'country',
  'itemType',
  'code',
  'variantCode',
  'sizeQuantities',
  'quantity',
];

export class NightOrders {
  private readonly shop = new Map<number, ShopOrder[]>();
  private nextShopNumber = 1001;

  constructor(private readonly seed: number) {}

  /** The store's new orders of night `n` (5 to 12; about one in eight cancelled, one in four with a fee line). */
  shopOrdersOf(n: number): ShopOrder[] {
    for (let k = this.shop.size + 1; k <= n; k++) this.shop.set(k, this.makeShopOrders(k));
    return this.shop.get(n) ?? [];
  }

  /** Every order of nights 1..n: what the store must end up with as print orders (cancelled ones excepted). */
  shopOrdersUpTo(n: number): ShopOrder[] {
    const all: ShopOrder[] = [];
    for (let k = 1; k <= n; k++) all.push(...this.shopOrdersOf(k));
    return all;
  }

  private makeShopOrders(n: number): ShopOrder[] {
    const rnd = seeded(this.seed * 7919 + n);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
    const count = 5 + Math.floor(rnd() * 8);
    const orders: ShopOrder[] = [];
    for (let i = 0; i < count; i++) {
      const number = this.nextShopNumber++;
      const [city, state, zip] = pick(CITIES);
      const first = pick(FIRST);
      const last = pick(LAST);
      const lines: ShopLine[] = [];
      const lineCount = 1 + Math.floor(rnd() * 3);
      for (let l = 0; l < lineCount; l++) {
        const size = SIZES[l % SIZES.length] as string;
        const transfer = rnd() < 0.3;
        lines.push(
          transfer
            ? {
                sku: `A10001-${size}`,
                name: `Crest Transfer - ${size}`,
                quantity: 10 + Math.floor(rnd() * 15),
                price: '4.00',
              }
            : {
                sku: `${pick(TEES)}-${size}`,
                name: `Gildan 5000 Tee - ${size}`,
                quantity: 2 + Math.floor(rnd() * 12),
                price: '3.95',
              },
        );
      }
      orders.push({
        name: `#${number}`,
        night: n,
        email: `${first.toLowerCase()}.${last.toLowerCase()}${number}@example.com`,
        contact: `${first} ${last}`,
        // The number in the street makes every address its own: no new order is anyone's duplicate.
        street: `${number} ${pick(STREETS)}`,
        city,
        state,
        zip,
        lines,
        fee: rnd() < 0.25,
        cancelled: rnd() < 0.125,
      });
    }
    return orders;
  }

  /** The store's export on night n: every order so far, newest first, as Shopify writes it. */
  shopExport(n: number): NightFile {
    const orders = this.shopOrdersUpTo(n).reverse();
    let text = csvLine(SHOPIFY_HEADER);
    for (const o of orders) text += shopRows(o, n).join('');
    return { name: 'orders_export.csv', text, orders: orders.map((o) => o.name) };
  }

  /** The nightly replenishment: the same address and items, a new order number. */
  reorder(n: number): NightFile {
    const number = `RO-${String(n).padStart(4, '0')}`;
    return { name: 'reorder.csv', text: reorderText(number, 'Nightly replenishment'), orders: [number] };
  }

  /** The same reorder sent again by mistake an hour later, under the ERP's next number. */
  resend(n: number): NightFile {
    const number = `RS-${String(n).padStart(4, '0')}`;
    return { name: `resend-${n}.csv`, text: reorderText(number, 'Nightly replenishment'), orders: [number] };
  }

  /** A season's kit: one job far over maxJobCost (300 transfers), to an address of its own. */
  overLimit(n: number): NightFile {
    const number = `BIG-${String(n).padStart(4, '0')}`;
    const row = [number, 'Season kit', 'UPS Ground', 'Lee Park', '', `${400 + n} Pine St`, 'Seattle', 'WA', '98101'];
    const text = csvLine(TEMPLATE_HEADER) + csvLine([...row, 'US', 'Asset', 'A10001', '', '', '300']);
    return { name: `big-${n}.csv`, text, orders: [number] };
  }

  /** A file someone typed by hand: a quantity in words. Invalid, nothing of it sent. */
  broken(n: number): NightFile {
    const number = `BR-${String(n).padStart(4, '0')}`;
    const row = [number, 'Hand typed', 'UPS Ground', 'Kim Ode', '', `${n} Oak Ave`, 'Denver', 'CO', '80202'];
    const text = csvLine(TEMPLATE_HEADER) + csvLine([...row, 'US', 'Asset', 'A10001', '', '', 'twelve']);
    return { name: `broken-${n}.csv`, text, orders: [number] };
  }
}

function reorderText(number: string, description: string): string {
  const r = REORDER;
  return (
    csvLine(TEMPLATE_HEADER) +
    csvLine([
      number,
      description,
      'UPS Ground',
      r.contact,
      r.organisation,
      r.street,
      r.city,
      r.state,
      r.zip,
      'US',
      'Asset',
      'A10001',
      '',
      '',
      '50',
    ]) +
    csvLine([number, '', '', '', '', '', '', '', '', '', 'Stock', 'GD5000', 'GD5000-BLK', 'S=12;M=12', ''])
  );
}

const RUSH_FEE: ShopLine = { sku: '', name: 'Rush processing', quantity: 1, price: '15.00' };

/** One order's rows: order-level cells on the first row only, as Shopify prints them. */
function shopRows(o: ShopOrder, night: number): string[] {
  const created = `2026-11-${String(((o.night - 1) % 28) + 1).padStart(2, '0')} 09:14:03 -0500`;
  const lines = o.fee ? [...o.lines, RUSH_FEE] : o.lines;
  const subtotal = o.lines.reduce((s, l) => s + l.quantity * Number(l.price), 0).toFixed(2);
  return lines.map((line, i) => {
    const cell: Record<string, string> = {
      Name: o.name,
      Email: o.email,
      'Created at': created,
      'Lineitem quantity': String(line.quantity),
      'Lineitem name': line.name,
      'Lineitem price': line.price,
      'Lineitem sku': line.sku,
      'Lineitem requires shipping': line.sku === '' ? 'false' : 'true',
      'Lineitem taxable': 'true',
      'Lineitem fulfillment status': 'pending',
      Vendor: 'Tigers Merch',
    };
    if (i === 0) {
      Object.assign(cell, {
        'Financial Status': o.cancelled ? 'voided' : 'paid',
        'Paid at': created,
        'Fulfillment Status': 'unfulfilled',
        'Accepts Marketing': 'no',
        Currency: 'USD',
        Subtotal: subtotal,
        Shipping: '0.00',
        Taxes: '0.00',
        Total: subtotal,
        'Discount Amount': '0.00',
        'Shipping Method': 'UPS Ground',
        'Shipping Name': o.contact,
        'Shipping Street': o.street,
        'Shipping Address1': o.street,
        'Shipping City': o.city,
        'Shipping Zip': o.zip,
        'Shipping Province': o.state,
        'Shipping Country': 'US',
        'Billing Name': o.contact,
        'Billing Street': o.street,
        'Billing Address1': o.street,
        'Billing City': o.city,
        'Billing Zip': o.zip,
        'Billing Province': o.state,
        'Billing Country': 'US',
        'Cancelled at': o.cancelled ? created : '',
        'Payment Method': 'Shopify Payments',
        'Outstanding Balance': '0.00',
        Id: String(5791830425000 + Number(o.name.slice(1))),
        'Risk Level': 'Low',
        Source: 'web',
        // Exported on a later night, an old order is fulfilled by now: the export changes, not only grows.
        ...(night > o.night + 2 ? { 'Fulfillment Status': 'fulfilled' } : {}),
      });
    }
    return csvLine(SHOPIFY_HEADER.map((h) => cell[h] ?? ''));
  });
}
