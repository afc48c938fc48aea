/**
 * Writes samples/erp/export.csv as real Windows-1252 bytes (what an ERP on a German or US
 * Windows box exports): `ü` is 0xFC, the en dash `–` 0x96 and `€` 0x80 — the last two in the
 * 0x80–0x9F range that Latin-1 and TextDecoder get wrong. Run: node samples/erp/generate-export.mjs
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';

const lines = [
  'Nightly reorder export – Müller Sportswear GmbH;;;;;;;;;;;;;;;;;;;;;;',
  'Generated 2026-05-01 02:00 by ERP 7.2;;;;;;;;;;;;;;;;;;;;;;',
  'PO_NUM;ORDER_DATE;DESCR;DUE;SHIP_VIA;SHIP_TO_NAME;SHIP_TO_COMPANY;ADDR1;CITY;STATE;ZIP;LINE_TYPE;ITEM;QTY;LINE_REF;COLOURS;VARIANT;QTY_S;QTY_M;QTY_L;QTY_XL;QTY_2XL;UNIT_PRICE',
  'RO-24051;2026-04-30;Nightly reorder – Müller Austin;2026-12-04;GRND;Jürgen Müller;Müller Sportswear;1 Main St;Austin;Texas;78701;R;A10001;50;;;;;;;;;€ 2,40',
  'RO-24051;2026-04-30;;;;;;;;;;S;GD5000;;;;GD5000-BLK;10;20;15;5;;€ 6,10',
  'RO-24052;2026-04-30;Nightly reorder – Dallas store;2026-12-11;2DAY;Ana Ruiz;Müller Sportswear;200 Congress Ave;Dallas;TX;75201;R;A10001;120;;;;;;;;;€ 2,40',
  'RO-24052;2026-04-30;;;;;;;;;;N;DTF Full Color 10" x 10";30;spring-crest;4;;;;;;;€ 3,20',
  'RO-24051;2026-04-30;;;;;;;;;;S;GD5000;;;;GD5000-WHT;4;6;;;2;€ 6,10',
];

const out = fileURLToPath(new URL('./export.csv', import.meta.url));
writeFileSync(out, iconv.encode(lines.join('\r\n') + '\r\n', 'windows-1252'));
console.log(`wrote ${out}`);
