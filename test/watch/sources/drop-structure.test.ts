import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The drop protocol is written once (src/watch/sources/drop.ts) and the stores stay thin: what
 * each step is lives in the protocol, a store says only how it is done where it keeps files.
 * These figures keep it so (docs/architecture.md#the-drop-protocol); a store growing past them
 * is a sign that a step is being written a second time.
 */
const SOURCES = join(import.meta.dirname, '../../../src/watch/sources');
const files = readdirSync(SOURCES).filter((f) => f.endsWith('.ts'));
const text = (f: string): string => readFileSync(join(SOURCES, f), 'utf8');
const lines = (f: string): number => text(f).split('\n').length - 1;
const STORES = ['folder-source.ts', 'bucket-source.ts'];

/** The body of method `name` in `source` (from its signature to the closing brace at its indent). */
function body(source: string, signature: RegExp): string {
  const start = source.search(signature);
  if (start < 0) throw new Error(`no ${signature}`);
  const end = source.indexOf('\n  }\n', start);
  return source.slice(start, end);
}

/** The files of sources/ that write `what` (a definition: `function x`, `x(...) {`, `async x(`). */
function definers(what: string): string[] {
  // A method or function with a body: an interface's declaration (model.ts) ends in `;`.
  const def = new RegExp(
    `^(?!.*;$)(export (async )?function ${what}\\b|[ \\t]+(protected |private |override )*(async )?${what}(<[^>]*>)?\\()`,
    'm',
  );
  return files.filter((f) => def.test(text(f)));
}

describe('the drop protocol’s structure', () => {
  it('keeps the stores thin: folder-source.ts ≤ 405 lines, no file of sources/ over 405, ≤ 1,510 in all', () => {
    expect(lines('folder-source.ts')).toBeLessThanOrEqual(405);
    expect(files.map((f) => [f, lines(f)]).filter(([, n]) => Number(n) > 405)).toEqual([]);
    expect(files.reduce((sum, f) => sum + lines(f), 0)).toBeLessThanOrEqual(1510);
  });

  it('writes the free-name retry, the cut-short finish and the held/ take-back once, in drop.ts', () => {
    expect(definers('firstFree')).toEqual(['drop.ts']);
    expect(definers('freeName')).toEqual(['drop.ts']);
    expect(definers('takeBack')).toEqual(['drop.ts']);
    expect(definers('giveBack')).toEqual(['drop.ts']);
    // Timestamped names are tried only by the retry; no store loops over candidates itself.
    for (const f of files.filter((x) => x !== 'drop.ts' && x !== 'drop-names.ts'))
      expect({ f, uses: text(f).includes('timestampedName') }).toEqual({ f, uses: false });
  });

  it('lists without moving: list() renames, copies, writes and deletes nothing', () => {
    for (const f of STORES) {
      const list = body(text(f), /^ {2}async list\(\)/m);
      expect({ f, moves: list.match(/\b(rename|link|unlink|rm|copy|put|delete|putAtTop)\(/g) ?? [] }).toEqual({
        f,
        moves: [],
      });
    }
  });

  it('has one contract test that both stores pass', () => {
    const contract = readFileSync(join(import.meta.dirname, 'drop-contract.test.ts'), 'utf8');
    expect(contract).toMatch(
      /describe\.each\(\[\s*\['a folder', folderKit\],\s*\['a bucket prefix', bucketKit\],?\s*\]\)/,
    );
  });
});
