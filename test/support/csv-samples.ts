import fc from 'fast-check';
import iconv from 'iconv-lite';

/**
 * Random template CSVs (the job index's and the windowed read's property tests): optional
 * columns in any order, rows of up to 8 orders (adjacent or scattered), blank and short and
 * long rows, quoted line breaks, CR/LF/CRLF, a byte-order mark, `sep=;`, Windows-1252.
 */

const OPTIONAL = [
  'description',
  'dateDue',
  'deliveryMethod',
  'contactName',
  'city',
  'country',
  'isSaturdayDelivery',
  'customerUserId',
  'itemType',
  'code',
  'quantity',
  'attr:Colors',
  'size:M',
  'sizeQuantities',
  'comment',
];
const CELLS = ['', '', ' ', 'a', 'Abc', 'x,y', 'x;y', 'line\nbreak', 'cr\r\nlf', 'q"uote', '12', 'ten', '-3', '1.5'];
const SIZE_CELLS = ['', 'S=1;M=2', 'S=1;S=2', 'bad', 'M=0;L=3', 'XL=ten'];
const MORE = ['yes', 'é', ' padded ', 'Café', '0'];

interface Sample {
  columns: string[];
  rows: Array<{ job: number; cells: number[]; extra: number; blankBefore: number; eol: number }>;
  shuffle: number[];
  bom: boolean;
  sep: boolean;
  latin1: boolean;
  trailing: boolean;
}

export const sampleArb: fc.Arbitrary<Sample> = fc.record({
  columns: fc
    .tuple(fc.shuffledSubarray(OPTIONAL), fc.nat(20))
    .map(([cols, at]) => [...cols.slice(0, at), 'orderNumber', ...cols.slice(at)]),
  rows: fc.array(
    fc.record({
      job: fc.integer({ min: -1, max: 7 }),
      cells: fc.array(fc.nat(100), { minLength: 17, maxLength: 17 }),
      extra: fc.constantFrom(0, 0, 0, 0, -1, 1),
      blankBefore: fc.constantFrom(0, 0, 0, 0, 1, 2),
      eol: fc.constantFrom(0, 0, 1, 1, 2),
    }),
    { minLength: 0, maxLength: 25 },
  ),
  shuffle: fc.array(fc.nat(1000), { minLength: 25, maxLength: 25 }),
  bom: fc.boolean(),
  sep: fc.boolean(),
  latin1: fc.boolean(),
  trailing: fc.boolean(),
});

function cellOf(column: string, pick: number, job: number): string {
  if (column === 'orderNumber') return job < 0 ? (pick % 2 ? '' : ' ') : pick % 5 === 0 ? ` SO-${job} ` : `SO-${job}`;
  if (column === 'sizeQuantities') return SIZE_CELLS[pick % SIZE_CELLS.length];
  if (column === 'isSaturdayDelivery') return ['', 'yes', 'no', 'maybe'][pick % 4];
  const pool = pick % 7 === 0 ? MORE : CELLS;
  return pool[pick % pool.length];
}

export function csvText(s: Sample): string {
  const d = s.sep ? ';' : ',';
  const quote = (c: string) => (/[,;"\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  const order = s.rows.map((_, i) => i);
  if (s.shuffle[0] % 2 === 0) order.sort((a, b) => s.shuffle[a % 25] - s.shuffle[b % 25] || a - b);
  const lines = [...(s.sep ? ['sep=;\n'] : []), `${s.columns.map(quote).join(d)}\n`];
  order.forEach((r, n) => {
    const row = s.rows[r];
    let cells = s.columns.map((c, k) => cellOf(c, row.cells[k] ?? 0, row.job));
    if (row.extra < 0) cells = cells.slice(0, -1);
    if (row.extra > 0) cells.push('extra');
    const eol = ['\n', '\r\n', '\r'][row.eol];
    lines.push(...Array.from({ length: row.blankBefore }, (_, b) => (b % 2 ? `${d}${d}\n` : '\n')));
    const last = n === order.length - 1 && !s.trailing;
    lines.push(cells.map(quote).join(d) + (last ? '' : eol));
  });
  return lines.join('');
}

export function bytesOf(s: Sample, text: string): Buffer {
  if (s.latin1 && !s.bom && [...text].every((c) => c.charCodeAt(0) < 0x80 || 'éÉ'.includes(c)))
    return iconv.encode(text, 'windows-1252');
  return Buffer.concat([Buffer.from(s.bom ? '\uFEFF' : ''), Buffer.from(text, 'utf8')]);
}
