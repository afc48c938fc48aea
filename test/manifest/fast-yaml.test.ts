import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatPath, type PathSegment } from '../../src/manifest/field-path.js';
import type { RawDocument, SourceLocation, SourceMap } from '../../src/manifest/model.js';
import { manifestSchema } from '../../src/manifest/schema/manifest-schema.js';
import { parseFastYaml } from '../../src/manifest/yaml/fast-yaml.js';
import { parseYamlPackage } from '../../src/manifest/yaml/package-yaml.js';
import { parseYamlText } from '../../src/manifest/yaml/read-yaml.js';
import { ADDRESS, ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * The fast YAML reader must answer exactly as the `yaml` package does — the same data (types,
 * key order, `__proto__` as data), no diagnostics, and the same line:column for every path a
 * message can name — or give up, and then the package reads the text.
 */

type Parsed = Pick<RawDocument, 'doc' | 'sources' | 'diagnostics'>;
type Located = SourceMap & { locateKey(path: string): SourceLocation };

const fast = (text: string): Parsed | undefined => parseFastYaml('m.yaml', text, manifestSchema);
const full = (text: string): Parsed => parseYamlPackage('m.yaml', text, {});

/**
 * Every path of the data, plus missing children (located at their nearest ancestor): of each
 * collection, of each scalar, and, since the fast reader finds a key by its text in the file,
 * the near misses of each key (a prefix, the key with the space or colon after it).
 */
function pathsOf(value: unknown, at: PathSegment[] = [], out: string[] = []): string[] {
  out.push(formatPath(at));
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) pathsOf(v, [...at, i], out);
    out.push(formatPath([...at, value.length + 3]), formatPath([...at, 'nope']), formatPath([...at, -1]));
    out.push(formatPath([...at, '0']));
  } else if (value !== null && typeof value === 'object') {
    for (const k of Object.keys(value)) {
      pathsOf((value as Record<string, unknown>)[k], [...at, k], out);
      out.push(formatPath([...at, k.slice(0, -1)]), formatPath([...at, `${k} `]), formatPath([...at, `${k}:`]));
    }
    out.push(formatPath([...at, 'nope']), formatPath([...at, 0]));
  } else {
    out.push(formatPath([...at, 0]), formatPath([...at, 'nope']));
  }
  return out;
}

/** The fast reader took `text` and agrees with the package on data, diagnostics and locations. */
function expectSame(text: string): void {
  const f = fast(text);
  expect(f, 'the fast reader gave up').toBeDefined();
  expectAgree(text, f as Parsed);
}

function expectAgree(text: string, f: Parsed): void {
  const p = full(text);
  expect(p.diagnostics).toEqual([]);
  expect(f.diagnostics).toEqual([]);
  expect(f.doc).toStrictEqual(p.doc);
  expect(JSON.stringify(f.doc)).toBe(JSON.stringify(p.doc)); // key order too
  const fs = f.sources as Located;
  const ps = p.sources as Located;
  for (const path of pathsOf(p.doc)) {
    expect([path, fs.locate(path)]).toEqual([path, ps.locate(path)]);
    expect([path, fs.locateKey(path)]).toEqual([path, ps.locateKey(path)]);
  }
}

const samplesDir = new URL('../../samples/', import.meta.url).pathname;
const sampleManifests = readdirSync(samplesDir, { recursive: true })
  .map(String)
  .filter((f) => /\.ya?ml$/.test(f) && !f.endsWith('mapping.yaml'));

/** The benchmark's manifest (bench/pipeline.mjs): jobs of asset reorders, one address in defaults. */
function benchManifest(jobs: number): string {
  const out = ['version: 1', 'defaults:', ADDRESS.replace(/^ {4}/gm, '  ').trimEnd(), 'jobs:'];
  for (let j = 1; j <= jobs; j++) {
    out.push(`  - orderNumber: R1-${String(j).padStart(6, '0')}`, `    description: Bench reorder ${j}`, '    items:');
    for (let k = 0; k < 5; k++) out.push(`      - { itemType: Asset, code: A1000${k}, quantity: ${50 + k * 10} }`);
  }
  return `${out.join('\n')}\n`;
}

describe('fast YAML reader: the same answers as the yaml package', () => {
  it('reads every sample manifest', () => {
    expect(sampleManifests.length).toBeGreaterThanOrEqual(4);
    for (const f of sampleManifests) expectSame(readFileSync(join(samplesDir, f), 'utf8'));
  });

  it("reads the tests' manifests and the benchmark's", () => {
    expectSame(manifest([{ orderNumber: 'PO-1', items: ITEMS.print + ITEMS.reorder + ITEMS.stock + ITEMS.tooFew }]));
    expectSame(manifest('BULK', 5));
    expectSame(benchManifest(20));
  });

  it('resolves plain scalars by the core schema, and keeps text where the schema wants text', () => {
    expectSame(
      [
        '# a comment first',
        'version: 1',
        '',
        'jobs:',
        '- orderNumber: 01234   # compact sequence, number-like text',
        '  dateDue: 2026-12-04',
        '  description:   spaced out   ',
        '  timeSensitive: true',
        '  orderComment: "say \'hi\' # not a comment"',
        "  customerUserId: 'it''s #1'",
        '  deliveryAddress: { deliveryMethod: UPS Ground, postalCode: 01234, country: NO, phone: +15125550100 }',
        '  items:',
        '    - { itemType: PriceCode, code: X, quantity: 0o17, customerReference: 007, attributes: { Colors: 4, Layers: 1.50, Ok: True, N: ~, E: 1e3, I: .inf, M: -.5, H: 0x1F } }',
        '    - itemType: Stock',
        '      code: GD5000 #not a comment? yes it is',
        '      sizeQuantities: { S: 10, M: +20, L: -3 }',
        '      samples: [1, two, "3", { x: y }, []]',
        '    - { }',
        '  __proto__: { polluted: yes }',
        '  "unused": 1',
        '',
      ]
        .filter((l) => !l.includes('"unused"'))
        .join('\n'),
    );
    expectSame('version: 1\njobs:\n  - orderNumber: a:b\n    description: -dash ?q :c x#y {z} [w]\n    items: []\n');
    expectSame('- a root\n- list\n');
    expectSame(`version: 1\n${'k'.repeat(1020)}    : at the limit\n`);
    expectSame('version: 1\nlist:\n  -   a\n  -\n    b: c\n  - # comment\n    d: e\nnull: null\ntilde: ~\n');
  });

  it('finds keys by their whole text: not a prefix, not with the spaces before their colon', () => {
    const text = [
      'a: 1',
      'ab: 2',
      'a b   : 3',
      'a:b: 4',
      '0: zero',
      '1:',
      '  - x',
      'm: { a: 5, ab: { a b: 6 }, q: 7 }',
      'k::   8',
      '',
    ].join('\n');
    const f = fast(text);
    expect(f?.doc).toEqual({
      a: 1,
      ab: 2,
      'a b': 3,
      'a:b': 4,
      0: 'zero',
      1: ['x'],
      m: { a: 5, ab: { 'a b': 6 }, q: 7 },
      'k:': 8,
    });
    expectAgree(text, f as Parsed);
    const located = f?.sources as Located;
    // Line:column of each, the key's and the value's: the package's answers are checked above.
    expect(located.locateKey('["a b"]')).toEqual({ file: 'm.yaml', line: 3, column: 1 });
    expect(located.locate('["a b"]')).toEqual({ file: 'm.yaml', line: 3, column: 9 });
    expect(located.locate('["a b "]')).toEqual({ file: 'm.yaml', line: 1, column: 1 });
    expect(located.locate('["a:b"]')).toEqual({ file: 'm.yaml', line: 4, column: 6 });
    expect(located.locate('[0]')).toEqual({ file: 'm.yaml', line: 5, column: 4 });
    expect(located.locate('1[0]')).toEqual({ file: 'm.yaml', line: 7, column: 5 });
    expect(located.locate('m.ab["a b"]')).toEqual({ file: 'm.yaml', line: 8, column: 23 });
    expect(located.locateKey('["k:"]')).toEqual({ file: 'm.yaml', line: 9, column: 1 });
    for (const missing of ['["a "]', '["a:"]', 'b', '["k"]', 'm.ab.a', 'm.q.x', '1.x', '1[1]']) {
      expect([missing, located.locate(missing)]).toEqual([missing, full(text).sources.locate(missing)]);
    }
  });

  it('gives up on what it does not read, and the package reads it', async () => {
    const base = 'version: 1\njobs:\n  - orderNumber: PO-1\n';
    const outside = [
      `${base}    description: &d text\n    orderComment: *d\n`, // anchor, alias
      `${base}    description: !!str 12\n`, // tag
      `${base}    description: |\n      two\n      lines\n`, // block scalar
      `${base}    description: two\n      lines\n`, // multi-line plain scalar
      `${base}    description: "a\\tb"\n`, // escape
      `${base}    description: 'a\n      b'\n`, // multi-line quoted
      `${base}    items: { a: 1,\n      b: 2 }\n`, // multi-line flow
      `${base}    description:\n`, // empty value
      `${base}    description: x\n    description: y\n`, // duplicate key
      `${base}    "description": x\n`, // quoted key
      `${base}\tdescription: x\n`, // tab
      `${base.replaceAll('\n', '\r\n')}`, // CR LF
      `%YAML 1.1\n---\n${base}`, // directive, document marker
      `${base}  description: bad indent\n`,
      `${base}    items: { a: 1, }\n`, // trailing comma
      `${base}    description: a: b\n`, // nested mapping on one line
      `${base}    - x\n`, // a sequence where a key belongs
      `${base}    items: ${'['.repeat(100)}${']'.repeat(100)}\n`, // nesting deeper than the reader goes
      `${base}${Array.from({ length: 100 }, (_, d) => `${' '.repeat(4 + d)}k:`).join('\n')} end\n`,
      // White space to JavaScript (trimEnd) but text to YAML: the package keeps it in the scalar.
      ...['\u00a0', '\u2028', '\u2029', '\u3000', '\u2003', '\u000b', '\u000c'].flatMap((ws) => [
        `${base}    description: x${ws}\n`,
        `${base}    description${ws}: x\n`,
        `${base}    items: [x${ws}]\n`,
        `${base}    items: { a${ws}: x${ws} }\n`,
      ]),
      // The package's 1,024 limit counts from the key to its colon, spaces before the colon included.
      `${base}    ${'k'.repeat(1020)}     : x\n`,
      `${'k'.repeat(1000)}${' '.repeat(30)}: x\n`,
      `${base}    ${'k'.repeat(1025)}: x\n`,
      'text\n',
      '',
      '# only a comment\n',
    ];
    for (const text of outside) {
      expect(fast(text), JSON.stringify(text)).toBeUndefined();
      // ...and the public reader still answers (the package's data or its diagnostics).
      const { doc, diagnostics } = await parseYamlText('m.yaml', text, {});
      expect({ doc, diagnostics }).toEqual({ doc: full(text).doc, diagnostics: full(text).diagnostics });
    }
  });

  it('resolves plain scalars as the package does (its YAML 1.2 core schema)', () => {
    const token = fc.stringMatching(/^[-+]?[0-9.eExXoOabcdfinANITFrulsy~_]{0,8}$/);
    let taken = 0;
    fc.assert(
      fc.property(token, (v) => {
        const text = `plain: ${v}\n`;
        const f = fast(text);
        if (!f) return;
        taken++;
        expect(f.doc).toStrictEqual(full(text).doc);
      }),
      { numRuns: 2000 },
    );
    expect(taken).toBeGreaterThan(1000);
  });

  it('agrees with the package on random manifests, or gives up', () => {
    const key = fc.constantFrom('a', 'orderNumber', 'code', 'x y', 'k-1', '__proto__', 'quantity', 'Colors', 'n0');
    const plain = fc.constantFrom(
      'abc',
      'UPS Ground',
      '01234',
      '12',
      '-7',
      '+3',
      '1.50',
      '1e3',
      '.inf',
      '-.inf',
      '.nan',
      '0o17',
      '0x1F',
      'true',
      'False',
      'null',
      '~',
      '2026-12-04',
      'a:b',
      'http://x.y/z?q=1',
      'x#y',
      'é ü 漢',
      '-dash',
      '?q',
    );
    const quoted = fc.constantFrom("'it''s'", "''", '"dq \' x"', '""', "'a # b'", '"1"');
    const scalar = fc.oneof(plain, quoted);
    const flow: fc.Arbitrary<string> = fc.letrec<{ flow: string }>((tie) => ({
      flow: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc
          .array(fc.tuple(key, fc.oneof(scalar, tie('flow'))), { maxLength: 3 })
          .map((es) => `{ ${es.map(([k, v]) => `${k}: ${v}`).join(', ')} }`),
        fc.array(fc.oneof(scalar, tie('flow')), { maxLength: 3 }).map((vs) => `[${vs.join(', ')}]`),
      ),
    })).flow;
    const comment = fc.constantFrom('', '', ' # note', '   #x');
    // Mostly two spaces deeper; sometimes as deep (a sequence may be; a map may not), one or four.
    const deeper = fc.constantFrom('  ', '  ', '  ', '', ' ', '    ');
    type Block = (indent: string) => string[];
    const block: fc.Arbitrary<Block> = fc.letrec<{ block: Block }>((tie) => ({
      block: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc
          .array(fc.tuple(key, fc.oneof(scalar, flow, tie('block')), comment, deeper), { minLength: 1, maxLength: 4 })
          .map(
            (es) => (indent: string) =>
              es.flatMap(([k, v, c, more]) =>
                typeof v === 'string' ? [`${indent}${k}: ${v}${c}`] : [`${indent}${k}:${c}`, ...v(`${indent}${more}`)],
              ),
          ),
        fc.array(fc.oneof(scalar, flow, tie('block')), { minLength: 1, maxLength: 3 }).map(
          (items) => (indent: string) =>
            items.flatMap((v) => {
              if (typeof v === 'string') return [`${indent}- ${v}`];
              const [first, ...rest] = v(`${indent}  `);
              return [`${indent}- ${(first as string).trimStart()}`, ...rest];
            }),
        ),
      ),
    })).block;
    let taken = 0;
    fc.assert(
      fc.property(block, (b) => {
        const lines = b('').flatMap((l, i) => (i % 5 === 4 ? [l, '', '  # between'] : [l]));
        const text = `${lines.join('\n')}\n`;
        const f = fast(text);
        if (!f) return;
        taken++;
        expectAgree(text, f);
      }),
      { numRuns: Number(process.env.RS_RUNS ?? 400) },
    );
    // The property is about texts the fast reader takes: make sure there were plenty.
    expect(taken).toBeGreaterThan(100);
  });

  /** Odd characters: white space to JavaScript but not to YAML, controls, NEL, zero-width, astral. */
  const odd = ['\u00a0', '\u2028', '\u3000', '\u2003', '\u000b', '\u000c', '\u0085', '\u200b', '\u0001', '\u{1F600}'];

  it('agrees on lines of random indentation, dashes, keys and values, or gives up', () => {
    const key = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('a', 'b', 'code', 'x y', '1', 'true', 'null', '__proto__', 'k:v', 'a]') },
      { weight: 4, arbitrary: fc.constantFrom('a{', 'a,b', '-a', '?a', 'quantity', 'postalCode', 'items', 'a  ') },
      { weight: 1, arbitrary: fc.constantFrom(`${'k'.repeat(1000)}${' '.repeat(30)}`, `${'k'.repeat(1024)}`) },
      { weight: 1, arbitrary: fc.constantFrom(...odd).map((c) => `a${c}`) },
    );
    const flowScalar = fc.constantFrom('a', '1', '01', "'q''x'", '"d"', 'a:b', ':a', '-a', '?a', '~', '.inf', '');
    const flow: fc.Arbitrary<string> = fc.letrec<{ flow: string }>((tie) => ({
      flow: fc.oneof(
        { depthSize: 'small' },
        fc
          .array(fc.tuple(key, fc.oneof(flowScalar, tie('flow')), fc.constantFrom(', ', ',', ' , ')), { maxLength: 3 })
          .map((es) => `{${es.map(([k, v, sep], i) => `${i ? sep : ' '}${k}: ${v}`).join('')} }`),
        fc
          .array(fc.tuple(fc.oneof(flowScalar, tie('flow')), fc.constantFrom(', ', ',', ' ,')), { maxLength: 3 })
          .map((vs) => `[${vs.map(([v, sep], i) => `${i ? sep : ''}${v}`).join('')}]`),
      ),
    })).flow;
    const value = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.constantFrom('v', '1', '01', '-1', '1.5', '0x1F', 'x #c', 'b#c', 'x]', 'x, y', 'a:b'),
      },
      { weight: 2, arbitrary: fc.constantFrom('a: b', 'x:', "'q'", '"d"', "''", '""', 'null', '~', 'http://x.y/z') },
      { weight: 2, arbitrary: fc.constantFrom('- x', '? x', '&a x', '*a', '!t x', '|', '>', '@x', '%x', "'x", '"x') },
      {
        weight: 1,
        arbitrary: fc.tuple(fc.constantFrom('x', 'x ', "'x"), fc.constantFrom(...odd)).map((p) => p.join('')),
      },
      { weight: 4, arbitrary: flow },
      { weight: 1, arbitrary: flow.map((f) => `${f} # c`) },
    );
    // Each line's indent moves from the previous one's: mostly the same or two deeper or shallower.
    const line = fc.tuple(
      fc.constantFrom(0, 0, 0, 2, 2, -2, -2, -4, 1, -1, 4),
      fc.constantFrom('', '', '', '- ', '- ', '-   ', '- - '),
      fc.oneof(
        { weight: 3, arbitrary: value },
        { weight: 3, arbitrary: fc.tuple(key, fc.constantFrom(':', ': # c', ':  ')).map(([k, c]) => `${k}${c}`) },
        { weight: 6, arbitrary: fc.tuple(key, value).map(([k, v]) => `${k}: ${v}`) },
        { weight: 1, arbitrary: fc.constantFrom('-', '# c', '') },
      ),
    );
    let taken = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), fc.constantFrom('\n', '', '\n\n'), (lines, end) => {
        let indent = 0;
        const text = `${lines
          .map(([move, dash, rest], i) => {
            indent = i === 0 ? 0 : Math.max(0, indent + move);
            return `${' '.repeat(indent)}${dash}${rest}`;
          })
          .join('\n')}${end}`;
        const f = fast(text);
        if (!f) return;
        taken++;
        expectAgree(text, f);
      }),
      { numRuns: Number(process.env.RS_RUNS ?? 4000), seed: Number(process.env.RS_SEED ?? 16) },
    );
    expect(taken).toBeGreaterThan(100);
  });

  it('agrees on mutated manifests (tokens inserted, deleted or overwritten), or gives up', () => {
    const seeds = [
      'a: b\nc:\n  - d\n  - e: f\n    g: [h, {i: j}]\n',
      '- a: 1\n  b:\n  - c\n- d\n',
      'k: {a: [b, c], d: \'e\'}\nl: "m"\n',
      'x:\n  y:\n    z: 1\n  w: 2\n',
      '-\n  a: b\n- - c\n',
      'jobs:\n- orderNumber: 01234\n  items:\n  - {code: 2, quantity: 3}\n  - itemType: Stock\n    code: x # y\n',
    ];
    const tokens = [
      ' ',
      '  ',
      '\n',
      '\n  ',
      '\n- ',
      '- ',
      '-',
      ':',
      ': ',
      '#',
      ' #',
      ',',
      '[',
      ']',
      '{',
      '}',
      "'",
      '"',
    ];
    tokens.push("''", '? ', '&', '*', '!', '|', '>', '%', '@', '`', '~', '.', '0', 'x', '\\', '---', 'k: v', ...odd);
    const mutation = fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.nat(2), fc.constantFrom(...tokens));
    let taken = 0;
    fc.assert(
      fc.property(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 4 }), (seed, muts) => {
        let text = seed;
        for (const [where, op, token] of muts) {
          const at = Math.floor(where * text.length);
          if (op === 0) text = text.slice(0, at) + token + text.slice(at);
          else if (op === 1) text = text.slice(0, at) + text.slice(at + token.length);
          else text = text.slice(0, at) + token + text.slice(at + token.length);
        }
        const f = fast(text);
        if (!f) return;
        taken++;
        expectAgree(text, f);
      }),
      { numRuns: Number(process.env.RS_RUNS ?? 4000), seed: Number(process.env.RS_SEED ?? 16) },
    );
    expect(taken).toBeGreaterThan(200);
  });
});
