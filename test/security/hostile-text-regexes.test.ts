import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse as parseCsv } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { chooseRoute, routeMatcher } from '../../src/core/config/routes.js';
import { createLogger } from '../../src/core/log/logger.js';
import { checkAttributes } from '../../src/resolve/preflight/attributes.js';
import { readCsvDocument } from '../../src/manifest/csv/read-csv.js';
import { loadMapping } from '../../src/manifest/mapping/load-mapping.js';
import { decimal } from '../../src/manifest/mapping/expressions.js';
import { echoSources } from '../support/api-fixtures.js';
import { ROOT } from '../support/dist.js';
import { tempFiles } from '../support/temp-files.js';

/**
 * Regular expressions that run on text a dropper or a server writes must not backtrack on it: each case
 * below took from 20 seconds to minutes of a blocked event loop before, and takes milliseconds
 * now. The bound is generous; it tells linear from quadratic, not fast from slow.
 */
const BOUND_MS = 5_000;
type Doc = { jobs: Array<{ deliveryAddress: { state?: string } }> };
const files = tempFiles('htorder-redos-');

function timed<T>(f: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = f();
  return { value, ms: performance.now() - started };
}

describe('number helpers on a long cell', () => {
  const digits = `${'1'.repeat(200_000)}x`;

  it('$decimal and $integer fail a 200,000-digit cell ending in a letter at once', () => {
    const { value, ms } = timed(() => {
      try {
        decimal(digits);
        return 'read';
      } catch (err) {
        return (err as { message: string }).message;
      }
    });
    expect(ms).toBeLessThan(BOUND_MS);
    expect(value).toBe('a text of 200001 characters is not a number');
    expect(decimal('+2.50')).toBe(2.5);
    expect(decimal('.5')).toBe(0.5);
    expect(decimal('24.')).toBe(24);
    expect(() => decimal('.')).toThrow('is not a number');
    expect(() => decimal('1.2.3')).toThrow('is not a number');
  });

  it('a numeric attribute of 200,000 digits and a letter is refused at once', () => {
    const defs = [{ name: 'Width', type: 'decimal', required: false, isMetaDataAttribute: false }];
    const { value, ms } = timed(() => checkAttributes({ Width: digits }, defs, 'DTF', 'jobs[0].items[0]', echoSources));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(value.map((d) => d.code)).toEqual(['attribute.not-a-number']);
  });
});

describe('the Odoo preset on a hostile export', () => {
  it('a State of 400,000 blanks and a Quantity of 200,000 digits are read in linear time', async () => {
    const sample = await readFile(join(ROOT, 'samples/odoo/sale.order.csv'), 'utf8');
    const rows = parseCsv(sample) as string[][];
    const header = rows[0];
    const state = header.indexOf('Delivery Address/State');
    const quantity = header.indexOf('Order Lines/Quantity');
    rows[1][state] = `Texas${' '.repeat(400_000)}x`;
    rows[2][quantity] = `${'1'.repeat(200_000)}x`;
    const file = await files.write('sale.order.csv', stringify(rows));
    const mapping = await loadMapping('odoo');
    const started = performance.now();
    const r = await readCsvDocument(file, { mapping });
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    const messages = r.diagnostics.map((d) => d.message).join('\n');
    expect(messages).toContain('a text of 200001 characters is not a number');
    const state0 = (r.doc as Doc).jobs[0].deliveryAddress.state;
    expect(state0 === `Texas${' '.repeat(400_000)}x`).toBe(true);
  });

  it('still cuts the country code off a state', async () => {
    const sample = await readFile(join(ROOT, 'samples/odoo/sale.order.csv'), 'utf8');
    const rows = parseCsv(sample) as string[][];
    rows[1][rows[0].indexOf('Delivery Address/State')] = 'New  York   (US)';
    const file = await files.write('states.csv', stringify(rows));
    const r = await readCsvDocument(file, { mapping: await loadMapping('odoo') });
    expect((r.doc as Doc).jobs[0].deliveryAddress.state).toBe('New  York');
  });
});

describe('log lines with a URL followed by punctuation', () => {
  it('a URL and 400,000 dots in a message and a field are logged in linear time, its query still cut', () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    const log = createLogger({ level: 'info', destination: stream });
    const dots = '.'.repeat(400_000);
    const { ms } = timed(() => {
      log.warn({ detail: `see http://x.example/${dots}a` }, `could not reach http://x.example/${dots}a`);
      log.warn(`signed https://cdn.example/a.png?sig=SECRETSIG${dots}`);
    });
    expect(ms).toBeLessThan(BOUND_MS);
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text).not.toContain('SECRETSIG');
    expect(text).toContain(`https://cdn.example/a.png?[redacted]${dots}`);
  });
});

describe('route globs on a dropper file name', () => {
  const route = (match: string[]) => (name: string) => chooseRoute([{ match }], name) !== undefined;

  it('*-*-*-*-*.csv against 250 dashes, a hundred times, in linear time', () => {
    const matches = route(['*-*-*-*-*.csv', '{a,*-*}-*-*-*.xlsx']);
    const name = `${'-'.repeat(250)}x`;
    const { value, ms } = timed(() => {
      let taken = 0;
      for (let n = 0; n < 100; n++) if (matches(name)) taken++;
      return taken;
    });
    expect(ms).toBeLessThan(BOUND_MS);
    expect(value).toBe(0);
    expect(matches('a-b-c-d-e.CSV')).toBe(true);
  });

  it('matches what picomatch matches, whatever the case, never a hidden name by a wildcard', () => {
    const options = { nocase: true, dot: false, strictBrackets: true, windows: false };
    const globs = ['*.csv', '*.YAML', 'shop-*.csv', '{a,b}*.{csv,xlsx}', '@(x|y)-*.csv', '?(pre-)*.csv', '[a-c]*.csv'];
    globs.push(
      '[!a-c]*.csv',
      'x[^a-c]*.csv',
      '[]a]x',
      'a?c',
      '*',
      '*-*-*.csv',
      'a\\*b',
      '(a|b).csv',
      '{a,{b,c}d}e',
      '[^.]*',
      '*[0-9]',
    );
    globs.push('.*', '.x*', '*.*');
    const names = ['x.csv', 'X.CSV', 'orders.yaml', 'shop-1.csv', 'Shop-.CSV', 'a1.xlsx', 'b.csv', 'x-1.csv', 'y-.csv'];
    names.push('pre-a.csv', 'c9.csv', 'd.csv', ']x', 'ax', 'abc', 'a-b-c.csv', '--.csv', 'a*b', 'axb', 'a.csv', 'bde');
    names.push('ae', '.hidden.csv', '.x', '.xy', 'file9', '-', 'a-b.csv', 'x', 'xd.csv', 'xb.csv');
    const differ: string[] = [];
    for (const glob of globs) {
      const theirs = picomatch(glob, options);
      const ours = route([glob]);
      for (const name of names) {
        // Hidden names are never inputs; picomatch lets an extglob take one all the same.
        const expected = theirs(name) && (!name.startsWith('.') || glob.startsWith('.'));
        if (expected !== ours(name)) differ.push(`${glob} ${name}: ${expected}`);
      }
    }
    expect(differ).toEqual([]);
  });

  it('refuses the extglob repeats and negation, whose matching is exponential', () => {
    for (const glob of ['+(a|aa).csv', '*(ab).csv', '!(x).csv'])
      expect(() => routeMatcher({ match: [glob] })).toThrow(
        'is not supported (its matching can take exponential time)',
      );
  });
});
