import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import { loadMapping } from '../../../src/manifest/mapping/load-mapping.js';

const root = new URL('../../../', import.meta.url);
const path = (p: string) => new URL(p, root).pathname;
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(path('schemas/manifest.schema.json'), 'utf8')),
);

describe('samples', () => {
  it('samples/csv/orders.csv reads cleanly into a schema-valid document', async () => {
    const r = await readCsvDocument(path('samples/csv/orders.csv'));
    expect(r.diagnostics).toEqual([]);
    expect(validate(r.doc), JSON.stringify(validate.errors)).toBe(true);
    const doc = r.doc as { jobs: Array<{ orderNumber: string; items: Array<{ itemType: string }> }> };
    // What the sample is there to show: several jobs, non-adjacent rows, all three item types.
    expect(doc.jobs.length).toBeGreaterThanOrEqual(3);
    expect(new Set(doc.jobs.flatMap((j) => j.items.map((i) => i.itemType)))).toEqual(
      new Set(['PriceCode', 'Asset', 'Stock']),
    );
    const firstJobRows = r.csv!.itemRows[0];
    expect(firstJobRows.some((row, i) => i > 0 && row !== firstJobRows[i - 1] + 1)).toBe(true);
    expect(r.csv!.header).toEqual(expect.arrayContaining(['attr:Colors', 'sizeQuantities']));
    expect(r.csv!.header.some((h) => h.startsWith('size:'))).toBe(true);
  });

  it('samples/erp/export.csv is real Windows-1252 and reads cleanly through samples/erp/mapping.yaml', async () => {
    const bytes = await readFile(path('samples/erp/export.csv'));
    expect(bytes.includes(0x96)).toBe(true); // – (en dash) in the 0x80–0x9F range
    expect(bytes.includes(0xfc)).toBe(true); // ü
    const mapping = await loadMapping(path('samples/erp/mapping.yaml'));
    const r = await readCsvDocument(path('samples/erp/export.csv'), { mapping });
    expect(r.diagnostics).toEqual([]);
    expect(validate(r.doc), JSON.stringify(validate.errors)).toBe(true);
    const doc = r.doc as { jobs: Array<Record<string, any>> };
    expect(doc.jobs[0].description).toBe('Nightly reorder – Müller Austin');
    expect(doc.jobs[0].deliveryAddress.deliveryMethod).toBe('UPS Ground');
    expect(doc.jobs[0].items[1].sizeQuantities).toEqual({ S: 10, M: 20, L: 15, XL: 5 });
  });
});
