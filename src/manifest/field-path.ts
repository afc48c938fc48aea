/**
 * Readable field paths (`jobs[3].items[0].quantity`, `jobs[0].items[1].attributes["Ink colour"]`)
 * and their segments. Every format's SourceMap and every Diagnostic uses this one spelling,
 * so a path printed in errors.txt can be parsed back to find the value.
 */

export type PathSegment = string | number;

/** Keys that read well without quoting: letters, digits, `_` and `-` (`DG-X`, `2XL`). */
const BARE_KEY = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

/** Segments → `jobs[3].items[0].quantity`. Odd keys are quoted JSON-style: `attributes["A.B"]`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (BARE_KEY.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** The inverse of formatPath. Unparseable input yields the segments read so far. */
export function parsePath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let i = 0;
  while (i < path.length) {
    const ch = path[i];
    if (ch === '.') {
      i++;
      continue;
    }
    if (ch === '[') {
      if (path[i + 1] === '"') {
        // A JSON string literal: find its closing quote, skipping escapes.
        let j = i + 2;
        while (j < path.length && path[j] !== '"') j += path[j] === '\\' ? 2 : 1;
        try {
          segments.push(JSON.parse(path.slice(i + 1, j + 1)) as string);
        } catch {
          return segments;
        }
        i = j + 2; // past `"]`
      } else {
        const close = path.indexOf(']', i);
        if (close < 0) return segments;
        const n = Number(path.slice(i + 1, close));
        if (!Number.isInteger(n)) return segments;
        segments.push(n);
        i = close + 1;
      }
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    segments.push(path.slice(i, j));
    i = j;
  }
  return segments;
}

/** `jobs[3].items[0]` + `quantity` → `jobs[3].items[0].quantity`. */
export function childPath(parent: string, key: PathSegment): string {
  return formatPath([...parsePath(parent), key]);
}

/** The job index a path belongs to (`jobs[3]…` → 3), or undefined for file-level paths. */
export function jobIndexOf(path: string | undefined): number | undefined {
  const m = path === undefined ? null : /^jobs\[(\d+)\]/.exec(path);
  return m ? Number(m[1]) : undefined;
}

/** The item a path belongs to (`jobs[3].items[0]…` → [3, 0]), or undefined. */
export function itemIndexOf(path: string | undefined): [number, number] | undefined {
  const m = path === undefined ? null : /^jobs\[(\d+)\]\.items\[(\d+)\]/.exec(path);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}
