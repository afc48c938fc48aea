import { describe, expect, it } from 'vitest';
import { readCsvDocument } from '../../src/manifest/csv/read-csv.js';
import { parseMapping } from '../../src/manifest/mapping/load-mapping.js';
import { tempFiles } from '../support/temp-files.js';

/**
 * A mapping's JSONata runs on every row of a dropped export. Each evaluation has a budget of time,
 * depth and sequence length, so an expression that never ends or builds ten million values fails
 * its order (the error names the row and column) instead of holding the watcher; and `$eval`,
 * which would run a cell's text as an expression, is refused when the mapping loads. Bounds are
 * generous: they tell a budget from none, not fast from slow.
 */
const files = tempFiles('htorder-budget-');
const CSV = 'Ref,Qty\nS1,3\n';
const BOUND_MS = 10_000;

async function readWith(field: string) {
  const yaml = `fields:\n  orderNumber: Ref\n  quantity: '${field}'\nconstants: { itemType: Stock, code: GD5000 }\n`;
  const mapping = parseMapping(yaml, await files.write('m.yaml', yaml));
  const started = performance.now();
  const r = await readCsvDocument(await files.write('orders.csv', CSV), { mapping });
  const messages = r.diagnostics.filter((d) => d.code === 'mapping.expression').map((d) => d.message);
  return { messages, ms: performance.now() - started };
}

describe('mapping expressions have a budget', () => {
  it('a recursion that never ends stops with an error on its order', async () => {
    const { messages, ms } = await readWith('($f := function($n) { $f($n + 1) }; $f(0))');
    expect(ms).toBeLessThan(BOUND_MS);
    expect(messages.join('\n')).toMatch(/timeout|Stack overflow/);
  });

  it('a deep recursion stops at the depth budget', async () => {
    const { messages, ms } = await readWith('($f := function($n) { $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000))');
    expect(ms).toBeLessThan(BOUND_MS);
    expect(messages.join('\n')).toContain('Stack overflow');
  });

  it('a range of ten million numbers is refused before it is built', async () => {
    const { messages, ms } = await readWith('$count([1..9999999])');
    expect(ms).toBeLessThan(BOUND_MS);
    expect(messages.join('\n')).toContain('The maximum sequence length');
  });

  it('an ordinary expression is untouched', async () => {
    const { messages } = await readWith('$count([1..$number(Qty)])');
    expect(messages).toEqual([]);
  });
});

describe('$eval is refused', () => {
  it('called or aliased, when the mapping loads, at the mapping line', async () => {
    for (const field of ['$eval(Qty)', '($e := $eval; $e(Qty))']) {
      const yaml = `fields:\n  orderNumber: Ref\n  quantity: '${field}'\n`;
      const file = await files.write('eval.yaml', yaml);
      expect(() => parseMapping(yaml, file)).toThrow(/eval\.yaml:3:\d+: .*\$eval is not available in a mapping/);
    }
  });
});
