/**
 * Part of `npm run build` (build/build.mjs): what an earlier build emitted for a source that is
 * gone (moved, renamed, removed) is removed from dist/. Left there, such a module still loads
 * for whoever imports it by its old path and ships in the package, and dist/ is no longer what
 * src/ makes.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** What the emit writes for a source: its JavaScript, its map, and tsc's declarations and their maps. */
const EMITTED = /\.(?:js|js\.map|d\.ts|d\.ts\.map)$/;

/**
 * Removes from `outDir` every emitted kind of file (EMITTED) that is not the output of one of
 * `jsFiles` (absolute paths of the JavaScript this build emits); other files (those build/
 * generates after the emit) are left alone. Returns the paths removed.
 */
export function removeStaleOutput(outDir, jsFiles) {
  const kept = new Set(
    jsFiles.flatMap((js) => {
      const base = js.slice(0, -'.js'.length);
      return [js, `${js}.map`, `${base}.d.ts`, `${base}.d.ts.map`];
    }),
  );
  const removed = [];
  let names;
  try {
    names = readdirSync(outDir, { recursive: true });
  } catch (err) {
    if (err.code === 'ENOENT') return removed;
    throw err;
  }
  for (const name of names) {
    const path = join(outDir, name);
    if (!EMITTED.test(name) || kept.has(path)) continue;
    rmSync(path, { force: true });
    removed.push(path);
  }
  return removed;
}
