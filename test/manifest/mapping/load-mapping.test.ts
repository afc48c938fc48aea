import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import { loadMapping, parseMapping } from '../../../src/manifest/mapping/load-mapping.js';
import { tempFiles } from '../../support/temp-files.js';
import { usageMessage as usageMessageOf } from '../../support/usage-error.js';

const files = tempFiles();

function usageMessage(text: string, file = 'erp.yaml'): string {
  return usageMessageOf(() => parseMapping(text, file));
}

describe('loadMapping', () => {
  it('loads a valid YAML mapping and records where constants were written', async () => {
    const file = await files.write(
      'ok.yaml',
      [
        'version: 1',
        'delimiter: ";"',
        'encoding: windows-1252',
        'skipRows: 2',
        'columns: { PO_NUM: orderNumber, ITEM: code, COLOUR: "attr:Colors" }',
        'constants:',
        '  itemType: Asset',
        '  country: NO',
        'values: { deliveryMethod: { GRND: UPS Ground } }',
        'sizeColumns: { QTY_S: S }',
        'attributeColumns: { NOTES: Notes }',
        'ignoreColumns: [UNIT_PRICE]',
      ].join('\n'),
    );
    const m = await loadMapping(file);
    expect(m).toMatchObject({
      delimiter: ';',
      encoding: 'windows-1252',
      skipRows: 2,
      columns: { PO_NUM: 'orderNumber', ITEM: 'code', COLOUR: 'attr:Colors' },
      constants: { itemType: 'Asset', country: 'NO' }, // YAML 1.2: NO is text, not false
      values: { deliveryMethod: { GRND: 'UPS Ground' } },
      sizeColumns: { QTY_S: 'S' },
      attributeColumns: { NOTES: 'Notes' },
      ignoreColumns: ['UNIT_PRICE'],
      file,
    });
    expect(m.constantLocations).toEqual({
      itemType: { file, line: 7, column: 13 },
      country: { file, line: 8, column: 12 },
    });
  });

  it('a constant from the mapping it extends stays located in that mapping', async () => {
    const base = await files.write('base.yaml', 'constants:\n  itemType: Asset\n');
    const file = await files.write('own.yaml', 'extends: ./base.yaml\nconstants:\n  country: US\n');
    const m = await loadMapping(file);
    expect(m.constants).toEqual({ itemType: 'Asset', country: 'US' });
    expect(m.constantLocations).toEqual({
      itemType: { file: base, line: 2, column: 13 },
      country: { file, line: 3, column: 12 },
    });
  });

  it('refuses an extends that goes round in a circle', async () => {
    const a = await files.write('a.yaml', 'extends: ./b.yaml\ncolumns:\n  PO: orderNumber\n');
    const b = await files.write('b.yaml', 'extends: ./a.yaml\n');
    await expect(loadMapping(a)).rejects.toThrow(`${b}:1:10: extends: "./a.yaml" extends this mapping again: a circle`);
    const self = await files.write('self.yaml', 'extends: ./self.yaml\n');
    await expect(loadMapping(self)).rejects.toThrow(/extends: ".\/self.yaml" extends this mapping again/);
  });

  it('loads JSON mappings too', async () => {
    const file = await files.write(
      'ok.json',
      JSON.stringify({ delimiter: '\t', columns: { PO: 'orderNumber' } }, null, 2),
    );
    expect(await loadMapping(file)).toMatchObject({ delimiter: '\t', columns: { PO: 'orderNumber' } });
  });

  it('reports an unknown key with its location and a suggestion', () => {
    expect(usageMessage('delimiter: ";"\nsizeColumn: { QTY_S: S }\n')).toBe(
      'erp.yaml:2:1: sizeColumn: unknown key "sizeColumn"; did you mean "sizeColumns"?',
    );
  });

  it('reports a bad enum value at the value', () => {
    expect(usageMessage('encoding: latin-1\n')).toBe(
      'erp.yaml:1:11: encoding: must be one of utf-8, utf-16, utf-16le, utf-16be, windows-1252',
    );
  });

  it('reports a target that is not a template field, with a suggestion', () => {
    expect(usageMessage('columns:\n  PO_NUM: orderNumbr\n')).toBe(
      'erp.yaml:2:11: columns.PO_NUM: "orderNumbr" is not a template field (a default CSV column name, attr:NAME or size:CODE); did you mean "orderNumber"?',
    );
    expect(usageMessage('constants:\n  contry: US\n')).toContain(
      'erp.yaml:2:3: constants.contry: "contry" is not a template field',
    );
  });

  it('reports wrong types and every problem at once, one per line', () => {
    const msg = usageMessage('skipRows: -1\ndelimiter: ""\nignoreColumns: A\n');
    expect(msg.split('\n')).toEqual([
      'erp.yaml:1:11: skipRows: must be >= 0',
      'erp.yaml:2:12: delimiter: must NOT have fewer than 1 characters',
      'erp.yaml:3:16: ignoreColumns: must be array',
    ]);
  });

  it('rejects two sources for one field and a column both mapped and ignored', () => {
    const msg = usageMessage('columns:\n  A: code\n  B: code\nsizeColumns: { C: M }\nignoreColumns: [C]\n');
    expect(msg.split('\n')).toEqual([
      'erp.yaml:3:3: columns.B: "B" and "A" both map to code; keep one',
      'erp.yaml:5:17: ignoreColumns[0]: "C" is both mapped (in sizeColumns) and ignored',
    ]);
  });

  it('reports YAML syntax errors and duplicate keys with their location', () => {
    expect(usageMessage('columns: [\n')).toMatch(/^erp\.yaml:2:1: \(syntax\): /);
    expect(usageMessage('delimiter: ";"\ndelimiter: ","\n')).toMatch(
      /^erp\.yaml:2:1: \(syntax\): Map keys must be unique/,
    );
  });

  it('reports an alias without its anchor, and an alias bomb, at the alias', () => {
    expect(usageMessage('fields:\n  orderNumber: *po\n')).toBe(
      'erp.yaml:2:16: (syntax): alias *po has no anchor &po before it',
    );
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      levels.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    expect(usageMessage(`${levels.join('\n')}\n`)).toBe(
      'erp.yaml:2:10: (syntax): aliases expand too far (this looks like an alias bomb); write the values out',
    );
  });

  it('reports an empty mapping and an unreadable file as UsageError', async () => {
    expect(usageMessage('')).toBe('erp.yaml:1:1: (root): mapping file is empty');
    await expect(loadMapping('/nonexistent/erp.yaml')).rejects.toThrow(UsageError);
    await expect(loadMapping('/nonexistent/erp.yaml')).rejects.toThrow(
      '/nonexistent/erp.yaml: cannot read mapping file (ENOENT)',
    );
  });
});
