/**
 * Writes a Shopify "Export orders" CSV of `rows` line rows (2–3 lines an order, order-level cells
 * on an order's first row only, as Shopify writes them) and the same lines in the default CSV
 * template, so `bench:check` can compare `check --mapping shopify` with a plain `check`.
 * Streamed to disk; constant memory.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

const SHOPIFY = (
  'Name,Email,Financial Status,Paid at,Fulfillment Status,Fulfilled at,Accepts Marketing,Currency,Subtotal,' +
  'Shipping,Taxes,Total,Discount Code,Discount Amount,Shipping Method,Created at,Lineitem quantity,Lineitem name,' +
  'Lineitem price,Lineitem compare at price,Lineitem sku,Lineitem requires shipping,Lineitem taxable,' +
  'Lineitem fulfillment status,Billing Name,Billing Street,Billing Address1,Billing Address2,Billing Company,' +
  'Billing City,Billing Zip,Billing Province,Billing Country,Billing Phone,Shipping Name,Shipping Street,' +
  'Shipping Address1,Shipping Address2,Shipping Company,Shipping City,Shipping Zip,Shipping Province,' +
  'Shipping Country,Shipping Phone,Notes,Note Attributes,Cancelled at,Payment Method,Payment Reference,' +
  'Refunded Amount,Vendor,Outstanding Balance,Employee,Location,Device ID,Id,Tags,Risk Level,Source,' +
  'Lineitem discount,Tax 1 Name,Tax 1 Value,Tax 2 Name,Tax 2 Value,Tax 3 Name,Tax 3 Value,Tax 4 Name,' +
  'Tax 4 Value,Tax 5 Name,Tax 5 Value,Phone,Receipt Number,Duties,Billing Province Name,Shipping Province Name,' +
  'Payment ID,Payment Terms Name,Next Payment Due At,Payment References'
).split(',');

const TEMPLATE = [
  'orderNumber',
  'description',
  'deliveryMethod',
  'contactName',
  'emailAddress',
  'streetAddress',
  'city',
  'state',
  'postalCode',
  'country',
  'itemType',
  'code',
  'variantCode',
  'quantity',
  'sizeQuantities',
];

const CITIES = [
  ['Austin', 'TX', '78701'],
  ['Dallas', 'TX', '75201'],
  ['Boston', 'MA', '2134'],
  ['Denver', 'CO', '80202'],
];
const LINES = [
  ['A10001-M', 'Tigers Crest Transfer - M', 12],
  ['A10001-L', 'Tigers Crest Transfer - L', 12],
  ['GD5000-BLK-M', 'Gildan 5000 Tee - Black / M', 6],
  ['GD5000-WHT-XL', 'Gildan 5000 Tee - White / XL', 4],
];
const SIZE = /-(S|M|L|XL)$/;

async function write(out, line) {
  if (!out.write(line)) await once(out, 'drain');
}

export async function generateShopify(shopifyFile, templateFile, rows) {
  const a = createWriteStream(shopifyFile);
  const b = createWriteStream(templateFile);
  await write(a, `${SHOPIFY.join(',')}\n`);
  await write(b, `${TEMPLATE.join(',')}\n`);
  let n = 0;
  let order = 1000;
  while (n < rows) {
    order++;
    const [city, state, zip] = CITIES[order % CITIES.length];
    const lines = Math.min(2 + (order % 2), rows - n);
    for (let k = 0; k < lines; k++, n++) {
      const [sku, name, qty] = LINES[(order + k) % LINES.length];
      const cells = Object.fromEntries(SHOPIFY.map((h) => [h, '']));
      Object.assign(cells, {
        Name: `#${order}`,
        Email: `buyer${order}@example.com`,
        'Created at': '2026-11-20 09:14:03 -0500',
        'Lineitem quantity': String(qty),
        'Lineitem name': name,
        'Lineitem price': '4.00',
        'Lineitem sku': sku,
        'Lineitem requires shipping': 'true',
        'Lineitem taxable': 'true',
        'Lineitem fulfillment status': 'pending',
      });
      if (k === 0) {
        Object.assign(cells, {
          'Financial Status': 'paid',
          Currency: 'USD',
          Total: '96.00',
          'Shipping Method': 'Standard',
          'Shipping Name': `Buyer ${order}`,
          'Shipping Address1': `${order} Main St`,
          'Shipping City': city,
          'Shipping Zip': zip,
          'Shipping Province': state,
          'Shipping Country': 'US',
          Id: String(5_791_830_000_000 + order),
        });
      }
      await write(a, `${SHOPIFY.map((h) => cells[h]).join(',')}\n`);
      const base = sku.replace(SIZE, '');
      const size = SIZE.exec(sku)?.[1] ?? '';
      const stock = !sku.startsWith('A');
      const t = [
        `SHOPIFY-${order}`,
        `Shopify order #${order}`,
        'UPS Ground',
        `Buyer ${order}`,
        `buyer${order}@example.com`,
        `${order} Main St`,
        city,
        state,
        zip.padStart(5, '0'),
        'US',
        stock ? 'Stock' : 'Asset',
        base.split('-')[0],
        stock ? base : '',
        stock ? '' : String(qty),
        stock ? `${size}=${qty}` : '',
      ];
      await write(b, `${t.join(',')}\n`);
    }
  }
  a.end();
  b.end();
  await Promise.all([once(a, 'close'), once(b, 'close')]);
  return { rows: n, orders: order - 1000 };
}
