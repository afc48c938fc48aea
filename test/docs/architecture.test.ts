import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/dist.js';

/**
 * The folder tree of src/, docs/architecture.md and the dependency rules of
 * .dependency-cruiser.cjs say the same thing: the doc lists every layer of the rules in their
 * order, with the folders each one's rule covers; every file of src/ belongs to exactly one
 * layer (or the sandbox, or is the public entry point); the doc's tree lists every folder of
 * src/ and names nothing that is not there.
 */

interface Rule {
  name: string;
  comment?: string;
  from: { path?: string };
  to: { path?: string };
}

const requireCjs = createRequire(import.meta.url);
const rules = (requireCjs(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: Rule[] }).forbidden;
const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

interface Layer {
  name: string;
  path: RegExp;
}

/**
 * The stack, lowest first: the `layer-<name>` rules that forbid importing "a layer above",
 * in their order, then the top layer, which has no rule of its own (nothing is above it): its
 * name is the last one the last rule's comment lists and its path is that rule's `to.path`.
 */
function stack(all: Rule[]): Layer[] {
  const above = /may not import a layer above it \(([^)]*)\)/;
  const stacked = all.filter((r) => /^layer-/.test(r.name) && above.test(r.comment ?? ''));
  const layers = stacked.map((r) => ({ name: r.name.slice('layer-'.length), path: new RegExp(r.from.path ?? '$^') }));
  const last = stacked.at(-1);
  if (last) {
    const top = above
      .exec(last.comment ?? '')![1]
      .split(',')
      .map((s) => s.trim());
    layers.push({ name: top.at(-1)!, path: new RegExp(last.to.path ?? '$^') });
  }
  return layers;
}

function srcFiles(dir = 'src'): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? srcFiles(`${dir}/${e.name}`) : [`${dir}/${e.name}`],
  );
}

/** Folders of src/ that hold at least one file (an emptied folder left in a work tree does not count). */
const srcFolders = (files: string[]): Set<string> =>
  new Set(
    files.flatMap((f) =>
      f
        .split('/')
        .slice(1, -1)
        .map((_, i, parts) => `src/${parts.slice(0, i + 1).join('/')}/`),
    ),
  );

/** The `src/` tree in the code block under `## The folders`: the paths it names, in order. */
function treePaths(doc: string): string[] {
  const section = doc.split(/^## The folders$/m)[1] ?? '';
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const lines = block.split('\n').filter((l) => l.trim() !== '');
  if (lines[0] !== 'src/') return [];
  const stackOfDirs: string[] = ['src/'];
  return lines.slice(1).map((l) => {
    const depth = (l.length - l.trimStart().length) / 2;
    const name = l.trim().split(/\s+/)[0];
    stackOfDirs.length = depth;
    const path = stackOfDirs.join('') + name;
    if (name.endsWith('/')) stackOfDirs.push(name);
    return path;
  });
}

/** The numbered layer entries of `## The layers`: `N. **name** — text` (with continuation lines). */
function docLayers(doc: string): { name: string; text: string }[] {
  const section = (doc.split(/^## The layers$/m)[1] ?? '').split(/^## /m)[0];
  return [...section.matchAll(/^\d+\. \*\*([\w-]+)\*\*([\s\S]*?)(?=^\d+\. |^\s*$)/gm)].map((m) => ({
    name: m[1],
    text: m[2],
  }));
}

/** Where a file lives, as the doc names it: its top folder (`src/api/`) or itself (`src/core/errors.ts`). */
const unit = (file: string): string => {
  const parts = file.split('/');
  return parts.length > 2 ? `src/${parts[1]}/` : file;
};

function disagreements(doc: string, all: Rule[], files: string[]): string[] {
  const problems: string[] = [];
  const layers = stack(all);
  const sandbox = all.find((r) => r.name === 'layer-sandbox');
  if (layers.length < 2) problems.push('no layer rules found in .dependency-cruiser.cjs');

  // Rules ↔ tree: every file of src/ is in exactly one layer, or the sandbox, or is src/index.ts.
  for (const f of files) {
    const owners = layers.filter((l) => l.path.test(f)).map((l) => l.name);
    if (sandbox?.from.path && new RegExp(sandbox.from.path).test(f)) owners.push('sandbox');
    if (f === 'src/index.ts') owners.push('public API');
    if (owners.length !== 1)
      problems.push(`${f} is in ${owners.length === 0 ? 'no layer' : `several layers: ${owners.join(', ')}`}`);
  }

  // Rules ↔ doc: the same layers in the same order, each naming the folders its rule covers.
  const entries = docLayers(doc);
  const names = entries.map((e) => e.name);
  const expected = layers.map((l) => l.name);
  if (names.join(' ') !== expected.join(' '))
    problems.push(`docs/architecture.md lists the layers ${names.join(', ')}; the rules say ${expected.join(', ')}`);
  for (const layer of layers) {
    const entry = entries.find((e) => e.name === layer.name);
    if (!entry) continue;
    for (const u of new Set(files.filter((f) => layer.path.test(f)).map(unit))) {
      if (!entry.text.includes(`\`${u}`)) problems.push(`layer ${layer.name}: docs/architecture.md does not name ${u}`);
    }
  }
  if (sandbox && !/\*\*sandbox\*\* — `src\/sandbox\/`/.test(doc))
    problems.push('docs/architecture.md does not describe the sandbox layer');

  // Tree ↔ doc: the tree names every folder and top-level file of src/, and nothing else.
  const tree = treePaths(doc);
  if (tree.length === 0) problems.push('docs/architecture.md has no `src/` tree under "## The folders"');
  const real = new Set([...srcFolders(files), ...files.filter((f) => f.split('/').length === 2)]);
  for (const p of real) if (!tree.includes(p)) problems.push(`the tree in docs/architecture.md lacks ${p}`);
  for (const p of tree) {
    if (!real.has(p) && !files.includes(p))
      problems.push(`the tree in docs/architecture.md names ${p}, which is not in src/`);
  }
  for (const top of [...real].filter((p) => p.split('/').length === 3 && p.endsWith('/'))) {
    if (!new RegExp(`\`${top.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`).test(doc.split(/^## The folders$/m)[0])) {
      problems.push(`the layers of docs/architecture.md do not mention ${top}`);
    }
  }
  return problems;
}

describe('docs/architecture.md, .dependency-cruiser.cjs and src/ agree', () => {
  const files = srcFiles();

  it('finds the layers of the rules', () => {
    const names = stack(rules).map((l) => l.name);
    expect(names[0]).toBe('core');
    expect(names.at(-1)).toBe('cli');
    expect(names.length).toBeGreaterThanOrEqual(9);
    expect(names.length).toBeLessThanOrEqual(12);
  });

  it('the layers, the folder tree and the rules say the same thing', () => {
    expect(disagreements(DOC, rules, files)).toEqual([]);
  });

  it('notices a layer missing, out of order, a folder not in the tree, a tree entry not in src/', () => {
    const dropLayer = DOC.replace(/^8\. \*\*watch\*\*.*$/m, '');
    expect(disagreements(dropLayer, rules, files).join('\n')).toMatch(/lists the layers .*the rules say/);
    const swapped = DOC.replace('5. **resolve**', '5. **reportX**')
      .replace('6. **report**', '6. **resolve**')
      .replace('5. **reportX**', '5. **report**');
    expect(disagreements(swapped, rules, files).join('\n')).toMatch(
      /lists the layers core, api, storage, manifest, report, resolve/,
    );
    expect(disagreements(DOC, rules, [...files, 'src/newstage/stage.ts']).join('\n')).toMatch(
      /src\/newstage\/stage.ts is in no layer[\s\S]*tree .* lacks src\/newstage\//,
    );
    expect(disagreements(DOC.replace('    track/ ', '    tracks/ '), rules, files).join('\n')).toMatch(
      /names src\/pipeline\/tracks\/, which is not in src/,
    );
    const renamedRule = rules.map((r) => (r.name === 'layer-watch' ? { ...r, name: 'layer-metrics' } : r));
    expect(disagreements(DOC, renamedRule, files).join('\n')).toMatch(/the rules say .*metrics/);
  });
});

describe('functions of src/ fit on one screen', () => {
  /** Declarative tables, where one entry per line reads better than a split. */
  const TABLES = new Set(['src/sandbox/data/catalogue.ts buildCatalogue']);

  it('no function is over 80 lines (build/long-functions.mjs), except declarative tables', async () => {
    const { longFunctions } = (await import(join(ROOT, 'build/long-functions.mjs'))) as {
      longFunctions(root: string, limit?: number): { file: string; line: number; lines: number; name: string }[];
    };
    const found = longFunctions(join(ROOT, 'src'))
      .map((f) => ({ ...f, file: f.file.slice(ROOT.length).replace(/^\/+/, '') }))
      .filter((f) => !TABLES.has(`${f.file} ${f.name}`))
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(found).toEqual([]);
    // The check sees long functions: the table it lets through is one.
    expect(longFunctions(join(ROOT, 'src/sandbox/data')).map((f) => f.name)).toContain('buildCatalogue');
  });
});
