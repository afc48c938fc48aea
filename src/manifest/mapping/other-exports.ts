/**
 * Exports of the same platforms that are not order exports (products, customers, listings,
 * Etsy's order-level Sold Orders CSV), by the columns their documented formats always have. A
 * file dropped by mistake is told what it is and what to export instead, in one line, instead of
 * an error per column. Pure; the header comes from read-header.ts.
 */
import { aPlatform } from '../../core/platform-names.js';

interface OtherExport {
  /** The platform, by the name of the preset that reads its orders (and of its page in docs/presets). */
  preset: string;
  /** What the file is, after the platform's name: `products export`. */
  what: string;
  /** Every one of these is in its header. */
  columns: readonly string[];
  /** What to export instead. */
  instead: string;
  /** An export of orders, only not one htorder can order from. */
  orders?: true;
}

const ORDERS = 'export its orders instead';

const OTHER_EXPORTS: readonly OtherExport[] = [
  // Shopify admin → Products → Export (its columns before and after the 2024 renaming).
  {
    preset: 'shopify',
    what: 'products export',
    columns: ['Handle', 'Title', 'Body (HTML)', 'Vendor'],
    instead: `${ORDERS} (Shopify admin → Orders → Export)`,
  },
  {
    preset: 'shopify',
    what: 'products export',
    columns: ['URL handle', 'Title', 'Description', 'Vendor'],
    instead: `${ORDERS} (Shopify admin → Orders → Export)`,
  },
  // Shopify admin → Customers → Export.
  {
    preset: 'shopify',
    what: 'customers export',
    columns: ['First Name', 'Last Name', 'Email', 'Total Spent', 'Total Orders'],
    instead: `${ORDERS} (Shopify admin → Orders → Export)`,
  },
  // Shopify admin → Orders → Export → "Transaction histories".
  {
    preset: 'shopify',
    what: 'transaction histories export',
    columns: ['Order', 'Name', 'Kind', 'Gateway', 'Status', 'Amount'],
    instead: 'export the orders themselves ("Plain CSV file", not "Transaction histories")',
  },
  // WooCommerce → Products → Export (the built-in product CSV exporter).
  {
    preset: 'woocommerce',
    what: 'products export',
    columns: ['ID', 'Type', 'SKU', 'Name', 'Published', 'Visibility in catalog'],
    instead: `${ORDERS} with an order export plugin`,
  },
  // Etsy → Settings → Options → Download Data: "Orders" as "Sold Orders", and "Currently for Sale Listings".
  {
    preset: 'etsy',
    what: '"Sold Orders" CSV (one row per order, without its items)',
    orders: true,
    columns: ['Sale Date', 'Order ID', 'Buyer User ID', 'Full Name', 'Number of Items', 'Street 1', 'Ship City'],
    instead: 'download the "Order Items" CSV instead (the same menu, CSV type "Order Items")',
  },
  {
    preset: 'etsy',
    what: 'listings export',
    columns: ['TITLE', 'DESCRIPTION', 'PRICE', 'CURRENCY_CODE', 'QUANTITY', 'TAGS'],
    instead: 'download the "Order Items" CSV instead',
  },
  // BigCommerce → Products → Export.
  {
    preset: 'bigcommerce',
    what: 'products export',
    columns: ['Item Type', 'Product Name', 'Product Type', 'Product Code/SKU'],
    instead: `${ORDERS} (Orders → View → Export)`,
  },
  // Squarespace → Products → Export all.
  {
    preset: 'squarespace',
    what: 'products export',
    columns: ['Product ID [Non Editable]', 'Product Type [Non Editable]', 'Title', 'SKU'],
    instead: `${ORDERS} (Commerce → Orders → Download CSV)`,
  },
  // Wix → Store Products → Export.
  {
    preset: 'wix',
    what: 'products export',
    columns: ['handleId', 'fieldType', 'name', 'productImageUrl'],
    instead: `${ORDERS} (eCommerce → Orders → Export)`,
  },
  // Odoo → Inventory or Sales → Products → Export, with labels or technical names.
  {
    preset: 'odoo',
    what: 'products export',
    columns: ['Name', 'Internal Reference', 'Sales Price'],
    instead: 'export sales orders instead (Sales → Orders → Orders → Export)',
  },
  {
    preset: 'odoo',
    what: 'products export',
    columns: ['name', 'default_code', 'list_price'],
    instead: 'export sales orders instead (Sales → Orders → Orders → Export)',
  },
];

/** `this looks like a Shopify products export, not an order export: …` for such a header; else undefined. */
export function otherExportMessage(header: readonly string[]): string | undefined {
  const names = new Set(header.map((h) => h.trim()));
  const found = OTHER_EXPORTS.find((e) => e.columns.every((c) => names.has(c)));
  if (found === undefined) return undefined;
  const not = found.orders === true ? '' : ', not an order export';
  return `this looks like ${aPlatform(found.preset)} ${found.what}${not}: ${found.instead} (docs/presets/${found.preset}.md)`;
}
