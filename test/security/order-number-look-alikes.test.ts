import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ADDRESS, ASSET_ITEM, brief, errors, loadText } from '../support/manifest-files.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * Two order numbers that print the same must be one order: "Café" composed (NFC) and decomposed
 * (NFD), or "PO-1" with an invisible character after it, were two ledger keys and two jobs on
 * the account while every report showed them alike. Such order numbers are refused where they
 * are written, and the duplicate check compares them in NFC.
 */
const NFC = 'Caf\u00e9-1';
const NFD = 'Cafe\u0301-1';

/** A YAML manifest whose order numbers are written as double-quoted YAML (its escapes kept). */
function yamlOf(...orderNumbers: string[]): string {
  const jobs = orderNumbers.map((n) => `  - orderNumber: "${n}"\n    items: [${ASSET_ITEM}]\n`).join('');
  return `version: 1\ndefaults: { deliveryAddress: ${ADDRESS} }\njobs:\n${jobs}`;
}

describe('look-alike order numbers in one manifest', () => {
  it('refuses the decomposed "Café" and reports it as a duplicate of the composed one, both located', async () => {
    const { diagnostics } = await loadText(yamlOf(NFC, NFD));
    expect(brief(errors(diagnostics)).sort()).toEqual([
      '6:18 order-number.duplicate jobs[1].orderNumber',
      '6:18 order-number.not-nfc jobs[1].orderNumber',
    ]);
    const notNfc = diagnostics.find((d) => d.code === 'order-number.not-nfc')!;
    expect(notNfc.source?.file).toMatch(/orders\.yaml$/);
    expect(notNfc.message).toContain('NFC');
  });

  it.each([
    ['a trailing zero-width space', 'PO-1\\u200B', 'order-number.invisible-character', 'U+200B at character 5'],
    ['a trailing word joiner', 'PO-1\\u2060', 'order-number.invisible-character', 'U+2060 at character 5'],
    ['a byte-order mark inside', 'PO\\uFEFF-1', 'order-number.invisible-character', 'U+FEFF at character 3'],
    ['a C1 next-line control', 'PO-1\\N', 'order-number.control-character', 'U+0085 at character 5'],
    ['a no-break space inside', 'PO\\u00A01', 'order-number.invisible-character', 'U+00A0 at character 3'],
  ])('refuses %s at its line and column', async (_name, written, code, where) => {
    const { diagnostics } = await loadText(yamlOf('PO-1', written));
    const found = errors(diagnostics).find((d) => d.code === code);
    expect(found).toMatchObject({ field: 'jobs[1].orderNumber', source: { line: 6, column: 18 } });
    expect(found!.message).toContain(where);
  });

  it('locates a look-alike in a CSV by row and column', async () => {
    const csv = `orderNumber,deliveryMethod,country,itemType,code,quantity\nPO-1,UPS Ground,US,Asset,A10001,5\nPO-1\u200b,UPS Ground,US,Asset,A10001,5\n`;
    const { diagnostics } = await loadText(csv, 'orders.csv');
    const found = errors(diagnostics).find((d) => d.code === 'order-number.invisible-character');
    expect(found?.source).toMatchObject({ row: 3, columnName: 'orderNumber' });
  });

  it('keeps plain order numbers, spaces and accents written composed', async () => {
    const { diagnostics } = await loadText(yamlOf('PO 1', NFC, 'Zoë/ß-7'));
    expect(errors(diagnostics)).toEqual([]);
  });
});

describe('look-alike order numbers across runs', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await PipelineHarness.start();
  });
  afterAll(async () => h.close());
  beforeEach(async () => h.reset());

  it.each([
    ['the decomposed "Café"', NFC, NFD],
    ['a trailing U+200B', 'PO-1', 'PO-1\u200b'],
    ['a trailing U+2060', 'PO-1', 'PO-1\u2060'],
  ])('a second run with %s sends nothing again', async (_name, first, second) => {
    const a = await h.write('a.yaml', manifest([{ orderNumber: first, items: ITEMS.reorder }]));
    expect((await h.cli('run', [a])).code).toBe(0);
    expect(await h.sandbox.admin.jobs()).toHaveLength(1);
    const posts = (await h.sandbox.admin.calls())['POST /Jobs'];

    const b = await h.write('b.yaml', manifest([{ orderNumber: JSON.stringify(second), items: ITEMS.reorder }]));
    const again = await h.cli('run', [b]);
    expect(again.code).not.toBe(0);
    expect((await h.sandbox.admin.calls())['POST /Jobs']).toBe(posts);
    expect((await h.sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual([first]);
    expect((await h.report(b)).jobs[0]!.status).not.toBe('submitted');
  });
});
