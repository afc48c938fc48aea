import { describe, expect, it } from 'vitest';
import { readJsonDocument } from '../../src/manifest/json/read-json.js';
import { readYamlDocument } from '../../src/manifest/yaml/read-yaml.js';

/**
 * The `yaml` package holds about a kilobyte per value it reads, and a JSON manifest (or YAML in
 * flow style) is read by it: a 4 MB file of nested brackets took 112 s and 2.2 GB, and a 10 MB
 * one ran out of memory. Nesting and the number of values are counted before the package reads
 * the text, and past either limit the manifest fails with a located error.
 */
const bytes = (text: string) => new TextEncoder().encode(text);

describe('manifests nested deeper than 100 levels', () => {
  const deep = `{"version": 1, "jobs": ${'['.repeat(1_000)}${']'.repeat(1_000)}}`;

  it('a JSON manifest fails at the bracket past the limit, with the limit in words', async () => {
    const raw = await readJsonDocument('deep.json', bytes(deep));
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'manifest.limit',
        message: 'lists and maps nested more than 100 deep; a manifest needs a handful of levels',
        source: { file: 'deep.json', line: 1, column: 23 + 100 }, // the outer map is the first level
      },
    ]);
  });

  it('a YAML manifest in flow style likewise, on its line', async () => {
    const raw = await readYamlDocument(
      'deep.yaml',
      bytes(`version: 1\njobs: ${'{a: '.repeat(500)}1${'}'.repeat(500)}\n`),
    );
    expect(raw.diagnostics.map((d) => [d.code, d.source])).toEqual([
      ['manifest.limit', { file: 'deep.yaml', line: 2, column: 7 + 4 * 100 }],
    ]);
  });

  it('brackets inside quoted text are not nesting', async () => {
    const text = `{"version": 1, "jobs": [{"orderNumber": "${'['.repeat(300)}", "items": []}]}`;
    const raw = await readJsonDocument('quoted.json', bytes(text));
    expect(raw.diagnostics).toEqual([]);
    expect(raw.doc).toMatchObject({ jobs: [{ orderNumber: '['.repeat(300) }] });
  });
});

describe('manifests of more values than one per 6 bytes of manifestMaxBytes', () => {
  const wide = (n: number) => `{"version": 1, "jobs": [${Array.from({ length: n }, () => '[]').join(',')}]}`;

  it('fails at the value past the limit, naming the setting', async () => {
    const raw = await readJsonDocument('wide.json', bytes(wide(4_000)), { maxBytes: 12_500 });
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics).toHaveLength(1);
    expect(raw.diagnostics[0]).toMatchObject({ code: 'manifest.limit', source: { file: 'wide.json', line: 1 } });
    expect(raw.diagnostics[0]?.message).toBe(
      'more than 2083 values (keys, texts, numbers, lists and maps): at most one per 6 bytes of the ' +
        'limit manifestMaxBytes (HTORDER_MANIFEST_MAX_BYTES)',
    );
  });

  it('the same manifest under a larger byte limit is read', async () => {
    const raw = await readJsonDocument('wide.json', bytes(wide(4_000)), { maxBytes: 100_000 });
    expect(raw.diagnostics).toEqual([]);
    expect((raw.doc as { jobs: unknown[] }).jobs).toHaveLength(4_000);
  });
});

describe('block maps nested past what the parser can hold', () => {
  it('fail with the limit in words, not a stack overflow', async () => {
    const lines = Array.from({ length: 3_000 }, (_, i) => `${' '.repeat(i)}a:`);
    const raw = await readYamlDocument('block.yaml', bytes(`version: 1\njobs:\n${lines.join('\n')} 1\n`));
    expect(raw.doc).toBeUndefined();
    expect(raw.diagnostics.map((d) => d.code)).toContain('manifest.limit');
    for (const d of raw.diagnostics) {
      expect(d.message).not.toMatch(/call stack/);
      expect(d.source).toMatchObject({ file: 'block.yaml', line: expect.any(Number) });
    }
  });
});
