import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { captureStdio } from '../support/capture-stdio.js';
import { tempDirPerTest } from '../support/temp-files.js';

const MAPPING = [
  'delimiter: ";"',
  'encoding: windows-1252',
  'columns: { Auftrag: orderNumber, Empfänger: contactName, Straße: streetAddress, Ort: city, PLZ: postalCode, Artikel: code, Menge: quantity }',
  'constants: { deliveryMethod: UPSGND, country: US, state: MA, itemType: Asset }',
  'ignoreColumns: [Größe]',
  '',
].join('\n');

const EXPORT = [
  'Auftrag;Empfänger;Straße;Ort;PLZ;Artikel;Größe;Menge',
  'A-1;Jürgen Müller;Hauptstraße 5;Boston;02134;A10001;M;25',
  'A-2;Zoë Weiß;Öhringer Weg 1;Boston;02134;A10001;L;0',
  '',
].join('\r\n');

const io = captureStdio();

describe('result.csv in the input’s dialect', () => {
  it('a ;-separated Windows-1252 export gets a ;-separated UTF-8 report with a BOM: same columns, umlauts intact', async () => {
    const dir = await tempDirPerTest();
    const mapping = join(dir, 'erp.yaml');
    await writeFile(mapping, MAPPING);
    const file = join(dir, 'export.csv');
    await writeFile(file, iconv.encode(EXPORT, 'windows-1252'));
    expect(await runCli(['check', '--mapping', mapping, file])).toBe(1); // A-2 has quantity 0

    const bytes = await readFile(`${file}.result.csv`);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = parse(bytes, { delimiter: ';', bom: true }) as string[][];
    expect(rows[0]).toEqual([
      'Auftrag',
      'Empfänger',
      'Straße',
      'Ort',
      'PLZ',
      'Artikel',
      'Größe',
      'Menge',
      '_row',
      '_status',
      '_jobNumber',
      '_newAssetSku',
      '_needsArtwork',
      '_error',
    ]);
    expect(rows.slice(1).map((r) => [r[1], r[2], r[6], r[8], r[9]])).toEqual([
      ['Jürgen Müller', 'Hauptstraße 5', 'M', '2', 'valid'],
      ['Zoë Weiß', 'Öhringer Weg 1', 'L', '3', 'invalid'],
    ]);
    expect(rows[2][13]).toContain('Menge');
    expect(io.err).toContain('export.csv');
  });

  it('the default template stays comma-separated UTF-8 without a BOM', async () => {
    const dir = await tempDirPerTest();
    const file = join(dir, 'orders.csv');
    await writeFile(
      file,
      'orderNumber,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity\n' +
        'PO-1,UPSGND,Jürgen,1 Main St,Boston,MA,02134,US,Asset,A10001,25\n',
    );
    expect(await runCli(['check', file]), io.err).toBe(0);
    const text = await readFile(`${file}.result.csv`, 'utf8');
    expect(text.startsWith('orderNumber,')).toBe(true);
    expect(text).toContain('Jürgen');
  });
});
