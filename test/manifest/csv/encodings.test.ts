import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { readCsvDocument } from '../../../src/manifest/csv/read-csv.js';
import type { Mapping } from '../../../src/manifest/mapping/model.js';
import { tempFiles } from '../../support/temp-files.js';

const files = tempFiles();

// 0x80 €, 0x96 –, 0x9C œ, 0x8A Š: the 0x80–0x9F range Latin-1 and TextDecoder get wrong.
const TEXT =
  'orderNumber,description,contactName,itemType,code\r\nPO-1,Saison – Œuvre €5,Jürgen Müller Šćœ,Asset,A1\r\n';
const EXPECTED = {
  orderNumber: 'PO-1',
  description: 'Saison – Œuvre €5',
  deliveryAddress: { contactName: 'Jürgen Müller Šćœ' },
};

async function readAs(name: string, bytes: Uint8Array, mapping?: Mapping) {
  const file = await files.write(name, bytes);
  return readCsvDocument(file, mapping ? { mapping } : {});
}
const job = (r: Awaited<ReturnType<typeof readAs>>) => (r.doc as { jobs: Array<Record<string, unknown>> }).jobs[0];

describe('readCsvDocument: encodings', () => {
  it('reads UTF-8 without a BOM (the default)', async () => {
    const r = await readAs('utf8.csv', Buffer.from(TEXT, 'utf8'));
    expect(r.diagnostics).toEqual([]);
    expect(job(r)).toMatchObject(EXPECTED);
  });

  it('strips a UTF-8 BOM so the first column is still orderNumber', async () => {
    const r = await readAs('utf8bom.csv', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT, 'utf8')]));
    expect(r.diagnostics).toEqual([]);
    expect(r.csv?.header[0]).toBe('orderNumber');
    expect(job(r)).toMatchObject(EXPECTED);
  });

  it.each([
    ['utf-16le', undefined],
    ['utf-16be', undefined],
    ['utf-16le', 'utf-16le'],
    ['utf-16be', 'utf-16'],
  ] as const)('reads %s with a BOM (mapping encoding %s)', async (enc, declared) => {
    const bytes = iconv.encode(TEXT, enc, { addBOM: true });
    const r = await readAs(`bom-${enc}-${declared}.csv`, bytes, declared ? { encoding: declared } : undefined);
    expect(r.diagnostics).toEqual([]);
    expect(r.csv?.header[0]).toBe('orderNumber');
    expect(job(r)).toMatchObject(EXPECTED);
  });

  it.each(['utf-16le', 'utf-16be'] as const)('reads %s without a BOM when the mapping says so', async (enc) => {
    const r = await readAs(`nobom-${enc}.csv`, iconv.encode(TEXT, enc), { encoding: enc });
    expect(r.diagnostics).toEqual([]);
    expect(job(r)).toMatchObject(EXPECTED);
  });

  it('reads Windows-1252 bytes 0x80–0x9F as the right characters', async () => {
    const bytes = iconv.encode(TEXT, 'windows-1252');
    expect([...bytes]).toEqual(expect.arrayContaining([0x80, 0x96, 0x8c, 0x9c, 0x8a, 0xfc]));
    const r = await readAs('cp1252.csv', bytes, { encoding: 'windows-1252' });
    expect(r.diagnostics).toEqual([]);
    expect(job(r)).toMatchObject({
      ...EXPECTED,
      deliveryAddress: { contactName: 'Jürgen Müller Šćœ'.replace('ć', '?') },
    });
  });

  it('decodes multi-byte characters split across read chunks', async () => {
    // ~1.5 MB of rows with multi-byte text so chunk (1 MiB) boundaries fall inside characters.
    const rows = Array.from({ length: 20_000 }, (_, i) => `PO-${i},Ünïcødé – €${i} 日本語テキスト,Zoë,Asset,A1`);
    const text = 'orderNumber,description,contactName,itemType,code\n' + rows.join('\n') + '\n';
    for (const enc of ['utf-8', 'utf-16le'] as const) {
      const bytes = enc === 'utf-8' ? Buffer.from(text) : iconv.encode(text, enc, { addBOM: true });
      const r = await readAs(`big-${enc}.csv`, bytes);
      expect(r.diagnostics).toEqual([]);
      const jobs = (r.doc as { jobs: Array<{ description: string }> }).jobs;
      expect(jobs).toHaveLength(20_000);
      expect(jobs.every((j, i) => j.description === `Ünïcødé – €${i} 日本語テキスト`)).toBe(true);
    }
  });
});
