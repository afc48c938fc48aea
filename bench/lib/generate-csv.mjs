/**
 * Writes a large default-template CSV (streamed to disk, constant memory): the 19 columns
 * below, 5 rows per order, the order's cells (description, date, delivery method and address)
 * on its first row only and the order number on every row, as spreadsheets and most exports
 * write them; mostly Asset reorders, some PriceCode (a quoted price
 * code with `"`) and Stock lines, from the sandbox demo catalogue. 1,000,000 rows ≈ 69 MB.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

export const HEADER = [
  'orderNumber',
  'description',
  'dateDue',
  'deliveryMethod',
  'contactName',
  'organisation',
  'phone',
  'streetAddress',
  'city',
  'state',
  'postalCode',
  'country',
  'itemType',
  'code',
  'quantity',
  'customerReference',
  'attr:Colors',
  'variantCode',
  'sizeQuantities',
];

export const CITIES = [
  ['Austin', 'Texas', '78701'],
  ['Dallas', 'TX', '75201'],
  ['Denver', 'Colorado', '80202'],
  ['Boston', 'MA', '02108'],
  ['Seattle', 'Washington', '98101'],
];
export const METHODS = ['UPS Ground', 'UPSGND', 'UPS 2nd Day Air', 'FedEx Overnight'];
const PRICE_CODE = '"DTF Full Color 10"" x 10"""';
export const ROWS_PER_ORDER = 5;

/** Deterministic tiny PRNG, so every run writes the same file. */
export function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes `rows` data rows to `file`; resolves with { rows, jobs, bytes }. */
/**
 * `invalidEvery` K > 0: every line of one order in K (every order with 1) has a quantity check
 * refuses (`x`, a Stock line's sizes `S=x`), as a customer's export whose quantity column went
 * wrong gives; the other cells, and the random sequence, as without it.
 */
export async function generateCsv(file, rows, seed = 1, { invalidEvery = 0 } = {}) {
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const random = rng(seed);
  let buffer = `${HEADER.join(',')}\n`;
  let written = 0;
  let jobs = 0;
  let bytes = 0;
  const flush = async () => {
    bytes += Buffer.byteLength(buffer);
    if (!out.write(buffer)) await once(out, 'drain');
    buffer = '';
  };
  const rest = ',,,,,,,,,,,'; // the 11 order columns after orderNumber, empty on later rows
  while (written < rows) {
    jobs++;
    const order = `SO-${jobs}`;
    const [city, state, zip] = CITIES[jobs % CITIES.length];
    const first = `,Team kit ${jobs % 97},2026-12-${String(1 + (jobs % 28)).padStart(2, '0')},${METHODS[jobs % METHODS.length]},Contact ${jobs % 1000},Club ${jobs % 500},512-555-${String(jobs % 10000).padStart(4, '0')},${jobs % 900} Main St,${city},${state},${zip},United States`;
    for (let i = 0; i < ROWS_PER_ORDER && written < rows; i++) {
      const r = random();
      let item;
      if (r < 0.15) item = `PriceCode,${PRICE_CODE},${10 + Math.floor(random() * 200)},ref-${i},${1 + (i % 4)},,`;
      else if (r < 0.85)
        item = `Asset,A1${String(Math.floor(random() * 600)).padStart(4, '0')},${10 + Math.floor(random() * 90)},,,,`;
      else item = `Stock,GD5000,,,,GD5000-${i % 2 ? 'BLK' : 'WHT'},S=${1 + (i % 9)};M=${2 + (i % 7)};XL=${i % 3}`;
      if (invalidEvery > 0 && jobs % invalidEvery === 0) item = spoiled(item);
      buffer += `${order}${i === 0 ? first : rest},${item}\n`;
      written++;
    }
    if (buffer.length > 1 << 20) await flush();
  }
  await flush();
  out.end();
  await once(out, 'finish');
  return { rows: written, jobs, bytes };
}

/** An item's cells (itemType onwards) with its quantity, or its sizes, not a number. */
function spoiled(item) {
  const cells = item.split(',');
  if (cells[0] === 'Stock') cells[6] = 'S=x';
  else cells[2] = 'x';
  return cells.join(',');
}
