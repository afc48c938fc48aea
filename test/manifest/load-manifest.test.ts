import { execFileSync } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { invalidJobs, isError } from '../../src/manifest/diagnostics.js';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import { ASSET_ITEM, brief, errors, loadText, writeInput } from '../support/manifest-files.js';

describe('loadManifest: defaults', () => {
  const text = [
    'version: 1',
    'defaults:',
    '  orderGroup: G-1',
    '  dateDue: 2026-12-04',
    '  deliveryAddress:',
    '    deliveryMethod: UPS Ground',
    '    city: Austin',
    '    postalCode: 01234',
    'jobs:',
    '  - orderNumber: A',
    '    deliveryAddress: { city: Dallas }',
    `    items: [${ASSET_ITEM}]`,
    '  - orderNumber: B',
    '    orderGroup: G-2',
    `    items: [${ASSET_ITEM}, ${ASSET_ITEM}]`,
    '',
  ].join('\n');

  it('deep-merges defaults into every job; job values win', async () => {
    const { manifest, diagnostics } = await loadText(text);
    expect(diagnostics).toEqual([]);
    const [a, b] = manifest!.jobs;
    expect(a).toMatchObject({ orderNumber: 'A', orderGroup: 'G-1', dateDue: '2026-12-04' });
    expect(a.deliveryAddress).toEqual({ deliveryMethod: 'UPS Ground', city: 'Dallas', postalCode: '01234' });
    expect(b).toMatchObject({ orderNumber: 'B', orderGroup: 'G-2' });
    expect(b.deliveryAddress).toEqual({ deliveryMethod: 'UPS Ground', city: 'Austin', postalCode: '01234' });
    expect(b.items).toHaveLength(2);
  });

  it('locates a value taken from defaults where it is written', async () => {
    const { manifest } = await loadText(text);
    expect(manifest!.sources.locate('jobs[1].deliveryAddress.city')).toMatchObject({ line: 7, column: 11 });
    expect(manifest!.sources.locate('jobs[0].deliveryAddress.city')).toMatchObject({ line: 11, column: 30 });
    expect(manifest!.sources.locate('jobs[1].dateDue')).toMatchObject({ line: 4, column: 12 });
  });

  it('reports a bad default value in defaults, making every job invalid', async () => {
    const { diagnostics } = await loadText(text.replace('dateDue: 2026-12-04', 'mustDate: sometimes'));
    expect(brief(diagnostics)).toEqual(['4:13 schema.type defaults.mustDate']);
    expect(invalidJobs(diagnostics).all).toBe(true);
  });

  it('requires a deliveryMethod after the merge, on the job or in defaults', async () => {
    const { diagnostics } = await loadText(
      `version: 1\njobs:\n  - orderNumber: A\n    deliveryAddress: { city: Austin }\n    items: [${ASSET_ITEM}]\n`,
    );
    expect(brief(diagnostics)).toEqual(['4:5 delivery-method.missing jobs[0].deliveryAddress.deliveryMethod']);
  });

  it('lists replace, never append: a job with items keeps only its own', async () => {
    // items cannot be a default; this checks the merge itself through a nested list.
    const { mergeDefaults } = await import('../../src/manifest/build-manifest.js');
    expect(mergeDefaults({ a: [1, 2], m: { x: 1, y: [1] } }, { a: [3], m: { y: [2] } })).toEqual({
      a: [3],
      m: { x: 1, y: [2] },
    });
  });

  it('merges a key named __proto__ as data: an own key of the result, never its prototype', async () => {
    const { mergeDefaults } = await import('../../src/manifest/build-manifest.js');
    // JSON.parse makes `__proto__` an own key, as the manifest readers do.
    const defaults = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1, "m": {"__proto__": {"x": 1}}}');
    const job = JSON.parse('{"m": {"__proto__": {"y": 2}}, "toString": "text"}');
    const merged = mergeDefaults(defaults, job) as Record<string, unknown>;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(merged, '__proto__')?.value).toEqual({ polluted: true });
    expect(merged.constructor).toBe(1);
    expect(merged.toString).toBe('text');
    const m = merged.m as Record<string, unknown>;
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(m, '__proto__')?.value).toEqual({ x: 1, y: 2 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('loadManifest: rules on a whole file', () => {
  it('reports a duplicate orderNumber with both locations', async () => {
    const { diagnostics } = await loadText(
      `version: 1\ndefaults: { deliveryAddress: { deliveryMethod: X } }\njobs:\n  - orderNumber: PO-7\n    items: [${ASSET_ITEM}]\n  - orderNumber: PO-7\n    items: [${ASSET_ITEM}]\n`,
    );
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      code: 'order-number.duplicate',
      field: 'jobs[1].orderNumber',
      source: { line: 6, column: 18 },
    });
    expect(diagnostics[0].message).toContain('jobs[0] at line 4, column 18 and jobs[1] at line 6, column 18');
  });

  it('drops zero sizes and then checks the sum', async () => {
    const { manifest, diagnostics } = await loadText(
      `version: 1\njobs:\n  - orderNumber: A\n    deliveryAddress: { deliveryMethod: X }\n    items:\n      - { itemType: Stock, code: GD5000, variantCode: GD5000-BLK, sizeQuantities: { S: 0, M: 4 }, quantity: 4 }\n      - { itemType: Stock, code: GD5000, variantCode: GD5000-WHT, sizeQuantities: { S: 0 } }\n`,
    );
    expect(manifest!.jobs[0].items[0].sizeQuantities).toEqual({ M: 4 });
    expect(brief(diagnostics)).toEqual(['7:67 size-quantities.all-zero jobs[0].items[1].sizeQuantities']);
  });

  it('reports a schema mistake once, not again through the rules', async () => {
    const { diagnostics } = await loadText(
      `version: 1\njobs:\n  - orderNumber: A\n    deliveryAddress: { deliveryMethod: X }\n    items: []\n`,
    );
    expect(brief(diagnostics)).toEqual(['5:5 schema.empty jobs[0].items']);
  });

  it('still runs the rules for parts of a job the schema did not fault', async () => {
    const { diagnostics } = await loadText(
      [
        'version: 1',
        'jobs:',
        '  - orderNumber: A',
        '    deliveryAddress: { deliveryMethod: X, countryCodeISO2: USA }',
        '    items:',
        "      - { itemType: PriceCode, code: X, quantity: 10, CustomerReference: r, externalArtworkUrl: 'http://x.example/a.png' }",
        '',
      ].join('\n'),
    );
    // No "missing customerReference" from the rules and no URL finding: that item is faulted.
    expect(brief(diagnostics)).toEqual([
      '4:60 country-code.iso3 jobs[0].deliveryAddress.countryCodeISO2',
      '6:55 schema.unknown-field jobs[0].items[0].CustomerReference',
    ]);
  });

  it('drops, in a file of many faulty jobs, exactly the rule findings inside or around a schema fault', async () => {
    const jobs: string[] = [];
    for (let j = 0; j < 400; j++) {
      jobs.push(
        `  - orderNumber: J${j}`,
        // Even jobs: the address is faulted (not an object), so the rules' missing deliveryMethod
        // inside it is not repeated; odd jobs: the rules' findings on the address stay.
        j % 2 === 0 ? '    deliveryAddress: nowhere' : '    deliveryAddress: { countryCodeISO2: USA }',
        '    items:',
        // A faulted garment (not a Stock field): the rules' finding on the same item's quantity is not repeated.
        '      - { itemType: Stock, code: G, quantity: 3, garment: tee, sizeQuantities: { S: 1 } }',
        // Not faulted by the schema: the rules' finding stays.
        '      - { itemType: Stock, code: G, quantity: 3, sizeQuantities: { S: 1 } }',
      );
    }
    const { diagnostics } = await loadText(['version: 1', 'jobs:', ...jobs, ''].join('\n'));
    const of = (j: number) =>
      diagnostics.filter((d) => d.field?.startsWith(`jobs[${j}].`)).map((d) => `${d.code} ${d.field}`);
    expect(of(0)).toEqual([
      'schema.type jobs[0].deliveryAddress',
      'schema.not-allowed jobs[0].items[0].garment',
      'size-quantities.sum-mismatch jobs[0].items[1].quantity',
    ]);
    expect(of(399)).toEqual([
      'delivery-method.missing jobs[399].deliveryAddress.deliveryMethod',
      'country-code.iso3 jobs[399].deliveryAddress.countryCodeISO2',
      'schema.not-allowed jobs[399].items[0].garment',
      'size-quantities.sum-mismatch jobs[399].items[1].quantity',
    ]);
    expect(diagnostics.length).toBe(200 * 3 + 200 * 4);
  });

  it('runs only manifest-wide rules when a default is broken', async () => {
    const { diagnostics } = await loadText(
      `version: 1\ndefaults: { deliveryAddress: { deliveryMethod: [5] } }\njobs:\n  - orderNumber: A\n    items: [${ASSET_ITEM}]\n  - orderNumber: A\n    items: [${ASSET_ITEM}]\n`,
    );
    expect(diagnostics.map((d) => d.code)).toEqual(['schema.type', 'order-number.duplicate']);
  });

  it('sorts diagnostics in document order', async () => {
    const { diagnostics } = await loadText(
      `version: 1\njobs:\n  - orderNumber: A\n    dateDue: 2026-02-31\n    deliveryAddress: { deliveryMethod: X, countryCodeISO2: USA }\n    items: [${ASSET_ITEM}]\n`,
    );
    expect(brief(diagnostics)).toEqual([
      '4:14 date.invalid jobs[0].dateDue',
      '5:60 country-code.iso3 jobs[0].deliveryAddress.countryCodeISO2',
    ]);
  });

  it('keeps the jobs of an invalid document for the report, and says which are usable', async () => {
    const { manifest, diagnostics } = await loadText(
      `version: 1\ndefaults: { deliveryAddress: { deliveryMethod: X } }\njobs:\n  - orderNumber: A\n    items: [${ASSET_ITEM}]\n  - orderNumber: B\n    items: [{ itemType: Asset, code: A1, quantity: lots }]\n  - 42\n`,
    );
    expect(manifest!.jobs.map((j) => j.orderNumber)).toEqual(['A', 'B', undefined]);
    expect(diagnostics.some(isError)).toBe(true);
    const bad = invalidJobs(diagnostics);
    expect(bad.all).toBe(false);
    expect([...bad.jobs].sort()).toEqual([1, 2]);
  });
});

describe('loadManifest: inputs', () => {
  it('refuses an unsupported extension', async () => {
    const file = await writeInput('orders.pdf', 'version: 1');
    const result = await loadManifest(file);
    expect(result.manifest).toBeUndefined();
    expect(result.diagnostics).toMatchObject([
      {
        code: 'input.unsupported-format',
        message:
          'unsupported file type ".pdf"; manifests are .yaml, .yml, .json, delimited text (.csv, .tsv, .txt) or .xlsx',
      },
    ]);
  });

  it('reports a missing file', async () => {
    const result = await loadManifest('/no/such/orders.yml');
    expect(result.diagnostics.map((d) => d.code)).toEqual(['input.not-found']);
    expect(result.input).toEqual({ file: '/no/such/orders.yml', format: 'yaml', sha256: undefined });
  });

  it('reports a directory as unreadable', async () => {
    const dir = await writeInput('x.yaml', '').then((f) => join(f, '..', 'sub.yaml'));
    await import('node:fs/promises').then((fs) => fs.mkdir(dir));
    expect((await loadManifest(dir)).diagnostics.map((d) => d.code)).toEqual(['input.unreadable']);
  });

  it('refuses a FIFO at the path without waiting for a writer', async () => {
    const fifo = await writeInput('y.yaml', '').then((f) => join(f, '..', 'fifo.yaml'));
    execFileSync('mkfifo', [fifo]);
    const result = await loadManifest(fifo);
    expect(result.diagnostics).toMatchObject([{ code: 'input.unreadable', message: 'is not a regular file' }]);
  });

  it.each(['sub.csv', 'sub.tsv', 'sub.xlsx'])(
    'refuses a directory named %s before any reader opens it',
    async (name) => {
      const dir = await writeInput('z.yaml', '').then((f) => join(f, '..', name));
      await import('node:fs/promises').then((fs) => fs.mkdir(dir));
      const result = await loadManifest(dir);
      expect(result.diagnostics).toMatchObject([{ code: 'input.unreadable', message: 'is not a regular file' }]);
    },
  );

  it.each(['fifo.csv', 'fifo.xlsx'])('refuses a FIFO named %s without waiting for a writer', async (name) => {
    const fifo = await writeInput('w.yaml', '').then((f) => join(f, '..', name));
    execFileSync('mkfifo', [fifo]);
    const result = await loadManifest(fifo);
    expect(result.diagnostics).toMatchObject([{ code: 'input.unreadable', message: 'is not a regular file' }]);
  });

  it('reports a missing CSV file as not found', async () => {
    const result = await loadManifest('/no/such/orders.csv');
    expect(result.diagnostics.map((d) => d.code)).toEqual(['input.not-found']);
  });

  it('reads CSV through the CSV reader', async () => {
    const csv =
      'orderNumber,deliveryMethod,itemType,code,quantity\nPO-1,UPSGND,Asset,A10001,50\nPO-1,,Asset,A10002,5\n';
    const { manifest, diagnostics, input } = await loadText(csv, 'orders.csv');
    expect(errors(diagnostics)).toEqual([]);
    expect(input.format).toBe('csv');
    expect(manifest!.jobs).toHaveLength(1);
    expect(manifest!.jobs[0].items.map((i) => i.code)).toEqual(['A10001', 'A10002']);
    expect(manifest!.csv!.itemRows).toEqual([[2, 3]]);
  });
});

describe('samples', () => {
  it('every sample manifest carries the schema modeline and is valid', async () => {
    const root = new URL('../../samples/', import.meta.url).pathname;
    const files: string[] = [];
    for (const entry of await readdir(root, { recursive: true })) {
      // Manifests are the YAML/JSON samples that name the manifest schema (others are ERP mappings).
      if (/\.(ya?ml|json)$/.test(entry) && !entry.includes('.result.')) {
        const text = await readFile(join(root, entry), 'utf8');
        if (text.includes('manifest.schema.json')) files.push(join(root, entry));
      }
    }
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const { diagnostics, manifest } = await loadManifest(file);
      expect({ file, diagnostics }).toEqual({ file, diagnostics: [] });
      expect(manifest!.jobs.length).toBeGreaterThan(0);
    }
  });
});
