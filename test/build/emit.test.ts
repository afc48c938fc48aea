/**
 * `npm run build` emits src/ file by file (build/build.mjs) rather than through tsc's whole
 * program; what it writes to dist/ must be what tsc writes, file for file and byte for byte, or
 * the built CLI that every other test runs is not the program tsc would have built.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIST, requireDist, ROOT } from '../support/dist.js';

/** Files that build/ generates after the emit, not from a source of src/. */
const GENERATED = [
  'manifest/mapping/preset-signatures.json',
  'manifest/schema/manifest-validator.standalone.cjs',
  'sandbox/snapshot-validator.standalone.cjs',
];

function buildConfig(): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (parsed === undefined || parsed.errors.length > 0) throw new Error('tsconfig.build.json does not parse');
  return parsed;
}

/** Every file under dist/ but tsc's declarations, relative to dist/. */
function distFiles(): string[] {
  return readdirSync(DIST, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.endsWith('.d.ts'))
    .map((e) => relative(DIST, join(e.parentPath, e.name)))
    .sort();
}

describe('npm run build', () => {
  beforeAll(() => requireDist());

  it('writes every JavaScript file and source map tsc writes for src/, and nothing else', () => {
    const parsed = buildConfig();
    const expected = parsed.fileNames
      .flatMap((f) => ts.getOutputFileNames(parsed, f, false))
      .filter((f) => !f.endsWith('.d.ts'))
      .map((f) => relative(DIST, f));
    expect(expected.length).toBeGreaterThan(600);
    expect(distFiles()).toEqual([...expected, ...GENERATED].sort());
  });

  // tsc's own emit of the whole program (its type information loaded, as `tsc -p` does): a
  // minute of CPU on a busy two-core machine.
  it('writes the same text as tsc, file for file', { timeout: 300_000 }, () => {
    const parsed = buildConfig();
    const program = ts.createProgram(parsed.fileNames, { ...parsed.options, declaration: false });
    const differ: string[] = [];
    let compared = 0;
    const result = program.emit(undefined, (file, text) => {
      compared++;
      if (readFileSync(file, 'utf8') !== text) differ.push(relative(DIST, file));
    });
    expect(result.emitSkipped).toBe(false);
    expect(compared).toBeGreaterThan(600);
    expect(differ).toEqual([]);
  });
});
