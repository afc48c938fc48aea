import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/program.js';
import { captureStdio } from '../../support/capture-stdio.js';
import { writeInput } from '../../support/manifest-files.js';

/**
 * docs/resolve.md: `code: PRESS-16-STD` on a Stock line (a variant code) is sent as
 * `code: PRESS-16` + `variantCode: PRESS-16-STD`. The check stage must let it through.
 */
const manifest = (item: string): string =>
  'version: 1\njobs:\n  - orderNumber: PO-STOCK-1\n    deliveryAddress: { deliveryMethod: UPSGND, contactName: Ann Lee, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701", country: US }\n' +
  `    items:\n      - ${item}\n`;

const io = captureStdio();

describe('a Stock line with a variant code in code', () => {
  it('passes check', async () => {
    const file = await writeInput('stock.yaml', manifest('{ itemType: Stock, code: PRESS-16-STD, quantity: 1 }'));
    expect(await runCli(['check', file]), io.err).toBe(0);
  });

  it('plan --sandbox sends code PRESS-16 with variantCode PRESS-16-STD', async () => {
    const file = await writeInput('stock.yaml', manifest('{ itemType: Stock, code: PRESS-16-STD, quantity: 1 }'));
    expect(await runCli(['plan', '--sandbox', file]), io.err).toBe(0);
    const report = JSON.parse(await readFile(`${file}.result.json`, 'utf8'));
    expect(report.jobs[0].status).toBe('valid');
  }, 30_000);

  it('still refuses a stock code with several variants and no variantCode, in plan', async () => {
    const file = await writeInput(
      'stock.yaml',
      manifest('{ itemType: Stock, code: GD5000, sizeQuantities: { M: 2 } }'),
    );
    expect(await runCli(['check', file]), io.err).toBe(0);
    expect(await runCli(['plan', '--sandbox', file])).toBe(1);
    expect(io.err).toContain('needs a variantCode');
  }, 30_000);
});
