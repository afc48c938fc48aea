import { describe, expect, it } from 'vitest';
import { readJsonDocument } from '../../src/manifest/json/read-json.js';
import { loadText } from '../support/manifest-files.js';

const read = (text: string) => readJsonDocument('orders.json', new TextEncoder().encode(text));

describe('readJsonDocument', () => {
  it('reads a JSON manifest with locations', async () => {
    const raw = await read('{\n  "version": 1,\n  "jobs": [\n    { "orderNumber": "A", "items": [] }\n  ]\n}\n');
    expect(raw.diagnostics).toEqual([]);
    expect(raw.format).toBe('json');
    expect(raw.doc).toEqual({ version: 1, jobs: [{ orderNumber: 'A', items: [] }] });
    expect(raw.sources.locate('jobs[0].orderNumber')).toEqual({ file: 'orders.json', line: 4, column: 22 });
  });

  it('maps a syntax error position to line:column', async () => {
    const raw = await read('{\n  "version": 1,\n  "jobs": [,]\n}\n');
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics).toHaveLength(1);
    expect(raw.diagnostics[0]).toMatchObject({
      code: 'json.syntax',
      source: { file: 'orders.json', line: 3, column: 12 },
    });
    expect(raw.diagnostics[0].message).toMatch(/^invalid JSON: /);
    expect(raw.diagnostics[0].message).not.toMatch(/position/);
  });

  it('refuses YAML-only syntax in a .json file', async () => {
    const raw = await read('version: 1\njobs: []\n');
    expect(raw.diagnostics.map((d) => d.code)).toEqual(['json.syntax']);
  });

  it('reports duplicate keys, which JSON.parse would silently collapse', async () => {
    const raw = await read('{"version": 1, "jobs": [], "version": 1}');
    expect(raw.diagnostics).toMatchObject([
      { code: 'yaml.duplicate-key', field: 'version', source: { line: 1, column: 28 } },
    ]);
    expect(raw.diagnostics[0].message).toBe('duplicate key "version" (first at line 1, column 2)');
  });

  it('takes a number written where the schema wants text as its text', async () => {
    const raw = await read(
      '{"version":1,"jobs":[{"orderNumber":1001,"deliveryAddress":{"postalCode":78701},"items":[]}]}',
    );
    expect((raw.doc as any).jobs[0]).toMatchObject({ orderNumber: '1001', deliveryAddress: { postalCode: '78701' } });
  });

  it('accepts tab-indented JSON', async () => {
    const raw = await read('{\n\t"version": 1,\n\t"jobs": []\n}\n');
    expect(raw.diagnostics).toEqual([]);
  });

  it('loads through loadManifest by extension', async () => {
    const { manifest, diagnostics } = await loadText(
      JSON.stringify({
        version: 1,
        jobs: [
          {
            orderNumber: 'J1',
            deliveryAddress: { deliveryMethod: 'UPSGND' },
            items: [{ itemType: 'Asset', code: 'A10001', quantity: 5 }],
          },
        ],
      }),
      'orders.json',
    );
    expect(diagnostics).toEqual([]);
    expect(manifest!.format).toBe('json');
  });
});

describe('JSON syntax error messages', () => {
  it.each([
    ['{"a": 1,}', 1, 9],
    ['{"a": tru}', 1, 7],
    ['{\n"a": "x\ny"}', 2, 8],
    ['{"a": 1} x', 1, 10],
    ['{"a": [1, 2', 1, 11],
  ])('%j fails at %i:%i', async (text, line, column) => {
    const raw = await read(text);
    expect(raw.diagnostics[0]).toMatchObject({ code: 'json.syntax', source: { line, column } });
  });

  it('does not echo the text around the error (it may hold a signed URL)', async () => {
    const raw = await read('{"url": "https://x.example/a.png?sig=SECRET",,}');
    expect(raw.diagnostics[0].message).not.toMatch(/SECRET/);
  });
});

describe('JSON syntax errors V8 gives no position for (and one it does)', () => {
  it.each([
    ['[1,]', 1, 4],
    ['{"a": }', 1, 7],
    ['[1,,2]', 1, 4],
    ['{"a": :}', 1, 7],
    ["{'a': 1}", 1, 2],
    ['{"a": NaN}', 1, 7],
    ['# a note\n{}', 1, 1],
    ['{\n  "a": [1, 2]  # note\n}', 2, 16],
    ['', 1, 1],
  ])('%j fails at %i:%i', async (text, line, column) => {
    const raw = await read(text);
    expect(raw.diagnostics[0]).toMatchObject({ code: 'json.syntax', source: { line, column } });
  });
});
