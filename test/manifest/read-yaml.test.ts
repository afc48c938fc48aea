import { Alias } from 'yaml';
import { describe, expect, it, vi } from 'vitest';
import { readYamlDocument } from '../../src/manifest/yaml/read-yaml.js';
import { ADDRESS, ASSET_ITEM, brief, loadText, writeInput } from '../support/manifest-files.js';

const enc = (s: string) => new TextEncoder().encode(s);
const read = (text: string, opts = {}) => readYamlDocument('orders.yaml', enc(text), opts);

describe('readYamlDocument: values as written', () => {
  it('keeps schema-text fields as their source text', async () => {
    const raw = await read(
      [
        'version: 1',
        'jobs:',
        '  - orderNumber: 01234', // would be the number 1234
        '    dateDue: 2026-12-04',
        '    deliveryAddress: { deliveryMethod: UPS Ground, postalCode: 01234, country: NO, phone: 5125550100, countryCodeISO2: NO }',
        '    items:',
        '      - { itemType: PriceCode, code: X, quantity: 10, customerReference: 007, attributes: { Colors: 4, Layers: 1.50, Ok: true } }',
        '',
      ].join('\n'),
    );
    expect(raw.diagnostics).toEqual([]);
    const job = (raw.doc as any).jobs[0];
    expect(job.orderNumber).toBe('01234');
    expect(job.dateDue).toBe('2026-12-04');
    expect(job.deliveryAddress).toMatchObject({
      postalCode: '01234',
      country: 'NO',
      phone: '5125550100',
      countryCodeISO2: 'NO',
    });
    expect(job.items[0].customerReference).toBe('007');
    expect(job.items[0].attributes).toEqual({ Colors: '4', Layers: '1.50', Ok: 'true' });
    // Where the schema wants a number, it stays a number.
    expect(job.items[0].quantity).toBe(10);
    expect((raw.doc as any).version).toBe(1);
  });

  it('keeps a quoted number a string where the schema wants an integer (so the schema can say so)', async () => {
    const raw = await read(
      `version: 1\njobs:\n  - orderNumber: A\n    items: [{ itemType: Asset, code: A1, quantity: "50" }]\n`,
    );
    expect((raw.doc as any).jobs[0].items[0].quantity).toBe('50');
  });

  it('reads null for an empty value instead of the empty source text', async () => {
    const raw = await read(`version: 1\njobs:\n  - orderNumber:\n    items: []\n`);
    expect((raw.doc as any).jobs[0].orderNumber).toBeNull();
  });

  it('treats a key named __proto__ as data', async () => {
    const raw = await read(`version: 1\njobs:\n  - orderNumber: A\n    __proto__: { polluted: true }\n    items: []\n`);
    const job = (raw.doc as any).jobs[0];
    expect(Object.hasOwn(job, '__proto__')).toBe(true);
    expect(({} as any).polluted).toBeUndefined();
    expect(job.polluted).toBeUndefined();
  });

  it('strips a UTF-8 BOM and hashes the bytes', async () => {
    const raw = await read(`\uFEFFversion: 1\njobs: []\n`);
    expect(raw.diagnostics).toEqual([]);
    expect((raw.doc as any).version).toBe(1);
    expect(raw.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('readYamlDocument: problems become located diagnostics', () => {
  it('reports a syntax error with line and column, without throwing', async () => {
    const raw = await read(`version: 1\njobs:\n  - orderNumber: A\n    items: [1, 2\n  - orderNumber: B\n`);
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics.length).toBeGreaterThan(0);
    expect(raw.diagnostics[0].code).toMatch(/^yaml\./);
    expect(raw.diagnostics[0].source).toMatchObject({
      file: 'orders.yaml',
      line: expect.any(Number),
      column: expect.any(Number),
    });
    expect(raw.diagnostics[0].source!.line).toBeGreaterThanOrEqual(4);
  });

  it('refuses a %YAML 1.1 directive, pointing at it', async () => {
    const raw = await read(`# header\n%YAML 1.1\n---\nversion: 1\njobs: []\n`);
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics).toHaveLength(1);
    expect(raw.diagnostics[0]).toMatchObject({ code: 'yaml.version', source: { line: 2, column: 1 } });
    expect(raw.diagnostics[0].message).toMatch(/%YAML 1\.1 is not supported/);
  });

  it('accepts an explicit %YAML 1.2 directive', async () => {
    const raw = await read(`%YAML 1.2\n---\nversion: 1\njobs: []\n`);
    expect(raw.diagnostics).toEqual([]);
  });

  it('reports a duplicate key at the second occurrence, naming the first', async () => {
    const raw = await read(
      `version: 1\njobs:\n  - orderNumber: A\n    description: one\n    description: two\n    items: []\n`,
    );
    expect(raw.diagnostics).toHaveLength(1);
    const d = raw.diagnostics[0];
    expect(d).toMatchObject({
      code: 'yaml.duplicate-key',
      field: 'jobs[0].description',
      source: { line: 5, column: 5 },
    });
    expect(d.message).toBe('duplicate key "description" (first at line 4, column 5)');
    expect((raw.doc as any).jobs[0].description).toBe('one');
  });

  it('treats keys equal by their text as duplicates (1 and "1")', async () => {
    const raw = await read(
      `version: 1\njobs:\n  - orderNumber: A\n    items:\n      - itemType: Stock\n        sizeQuantities: { 1: 2, "1": 3 }\n`,
    );
    expect(raw.diagnostics.map((d) => d.code)).toEqual(['yaml.duplicate-key']);
  });

  it('rejects an alias bomb quickly with a clear message', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 12; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${new Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const raw = await read(`${levels.join('\n')}\nversion: 1\njobs: []\n`);
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics).toHaveLength(1);
    expect(raw.diagnostics[0].code).toBe('yaml.alias-limit');
    expect(raw.diagnostics[0].message).toMatch(/alias bomb/);
    expect(raw.diagnostics[0].source?.line).toBeGreaterThan(1);
  });

  it('expands ordinary aliases', async () => {
    const raw = await read(
      `version: 1\njobs:\n  - orderNumber: A\n    deliveryAddress: &addr { deliveryMethod: UPSGND, postalCode: 01234 }\n    items: []\n  - orderNumber: B\n    deliveryAddress: *addr\n    items: []\n`,
    );
    expect(raw.diagnostics).toEqual([]);
    expect((raw.doc as any).jobs[1].deliveryAddress).toEqual({ deliveryMethod: 'UPSGND', postalCode: '01234' });
  });

  it('enforces the alias-count option', async () => {
    const raw = await read(`x: &x 1\ny: [*x, *x, *x]\n`, { maxAliasCount: 2 });
    expect(raw.diagnostics.map((d) => d.code)).toEqual(['yaml.alias-limit']);
  });

  it('reports multiple documents in one file', async () => {
    const raw = await read(`version: 1\njobs: []\n---\nversion: 1\n`);
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics[0]).toMatchObject({ code: 'yaml.multiple-docs', source: { line: 3 } });
  });

  it('reports an unknown tag', async () => {
    const raw = await read(`version: 1\njobs: !weird []\n`);
    expect(raw.diagnostics[0]).toMatchObject({ code: 'yaml.tag-resolve-failed', source: { line: 2, column: 7 } });
  });

  it('reports an empty file', async () => {
    const raw = await read(`# nothing here\n`);
    expect(raw.diagnostics.map((d) => d.code)).toEqual(['manifest.empty']);
  });

  it('refuses bytes that are not UTF-8', async () => {
    const raw = await readYamlDocument('orders.yaml', new Uint8Array([0x76, 0x3a, 0x20, 0xff, 0xfe, 0x0a]));
    expect(raw.diagnostics.map((d) => d.code)).toEqual(['input.encoding']);
  });

  it('refuses a file over the size cap, from disk or from bytes', async () => {
    const text = `version: 1\njobs: []\n# ${'x'.repeat(200)}\n`;
    expect((await read(text, { maxBytes: 100 })).diagnostics.map((d) => d.code)).toEqual(['input.too-large']);
    const file = await writeInput('big.yaml', text);
    const raw = await readYamlDocument(file, undefined, { maxBytes: 100 });
    expect(raw.diagnostics[0]).toMatchObject({ code: 'input.too-large', source: { file } });
    expect(raw.diagnostics[0].message).toMatch(/over the 100-byte limit/);
  });

  it('reports a missing file as input.not-found', async () => {
    const raw = await readYamlDocument('/no/such/dir/orders.yaml');
    expect(raw.diagnostics.map((d) => d.code)).toEqual(['input.not-found']);
  });
});

describe('YAML source map', () => {
  it('locates values, keys and the nearest ancestor of a missing path', async () => {
    const raw = await read(
      `version: 1\njobs:\n  - orderNumber: A\n    items:\n      - itemType: Asset\n        quantity: 5\n`,
    );
    expect(raw.sources.locate('jobs[0].items[0].quantity')).toEqual({ file: 'orders.yaml', line: 6, column: 19 });
    expect(raw.sources.locate('jobs[0].items[0].code')).toEqual({ file: 'orders.yaml', line: 5, column: 9 });
    expect(raw.sources.locate('jobs[0].items')).toEqual({ file: 'orders.yaml', line: 4, column: 5 });
    expect((raw.sources as any).locateKey('jobs[0].items[0].quantity')).toEqual({
      file: 'orders.yaml',
      line: 6,
      column: 9,
    });
    expect(raw.sources.locate('nowhere')).toEqual({ file: 'orders.yaml', line: 1, column: 1 });
  });

  it('locates through aliases from one index of the anchors, never a walk of the whole document per alias', async () => {
    // A shared address with a mistyped key, aliased by every job: one error per job, each
    // located through its alias. yaml's Alias.resolve walks the whole document per call, which
    // made a manifest of some MB with thousands of such errors take hours.
    const jobs = Array.from({ length: 300 }, (_, i) =>
      i === 0
        ? '  - orderNumber: J0\n    deliveryAddress: &addr\n      contactNmae: Ana\n      city: Austin\n'
        : `  - orderNumber: J${i}\n    deliveryAddress: *addr\n`,
    );
    // A redefined anchor: an alias refers to the last one before it.
    jobs.push(
      '  - orderNumber: K\n    deliveryAddress: &addr\n      city: Boston\n',
      '  - orderNumber: L\n    deliveryAddress: *addr\n',
    );
    const raw = await read(`version: 1\njobs:\n${jobs.join('')}`);
    const resolve = vi.spyOn(Alias.prototype, 'resolve');
    try {
      for (let i = 0; i < 300; i++)
        expect(raw.sources.locate(`jobs[${i}].deliveryAddress.contactNmae`)).toEqual({
          file: 'orders.yaml',
          line: 5,
          column: 20,
        });
      expect(raw.sources.locate('jobs[301].deliveryAddress.city')).toEqual({
        file: 'orders.yaml',
        line: 607,
        column: 13,
      });
      expect(resolve).not.toHaveBeenCalled();
    } finally {
      resolve.mockRestore();
    }
  });
});

it('end to end: a full load keeps the leading zero and NO through validation', async () => {
  const { diagnostics, manifest } = await loadText(
    `version: 1\njobs:\n  - orderNumber: PO-1\n    deliveryAddress: { deliveryMethod: NZCOUR, postalCode: 0123, country: NO }\n    items: [${ASSET_ITEM}]\n`,
  );
  expect(brief(diagnostics)).toEqual([]);
  expect(manifest!.jobs[0].deliveryAddress).toEqual({ deliveryMethod: 'NZCOUR', postalCode: '0123', country: 'NO' });
  void ADDRESS;
});
