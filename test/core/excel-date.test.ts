import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dateText, excelSerialText, excelSerialToDate } from '../../src/core/excel-date.js';
import { excelDate } from '../../src/manifest/mapping/expressions.js';
import { numberText } from '../../src/manifest/xlsx/xlsx-cells.js';

describe('excel-date: one reading of spreadsheet serial day numbers', () => {
  it('reads the 1900 and 1904 date systems, with the time of day as wall-clock time', () => {
    expect(excelSerialText(25569)).toBe('1970-01-01');
    expect(excelSerialText(46363)).toBe('2026-12-07');
    expect(excelSerialText(46363.396)).toBe('2026-12-07T09:30:14');
    expect(excelSerialText(46363 - 1462, true)).toBe('2026-12-07');
    expect(excelSerialToDate(46363).toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(dateText(new Date(Number.NaN))).toBe('');
  });

  it("is what a workbook's date cell, $excelDate and the dateDue rule read (property)", async () => {
    const { dueDate } = await import('../../src/manifest/rules/due-date.js');
    fc.assert(
      fc.property(fc.integer({ min: 10_000, max: 99_999 }), (day) => {
        const text = excelSerialText(day);
        expect(excelDate(day)).toBe(text);
        expect(excelDate(`${day}.75`)).toBe(text);
        expect(numberText(day, 'date')).toBe(text);
        const [finding] = dueDate({ dateDue: String(day) } as never, 0);
        expect(finding.message).toContain(`(it stands for ${text})`);
      }),
    );
  });
});
