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

/** One segment: a key (after a `.`, or first), an index `[3]`, or a quoted key `["A.B"]` (JSON). */
const SEGMENT = /\.?([^.[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;

/** The inverse of formatPath. Unparseable input yields the segments read so far. */
export function parsePath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  SEGMENT.lastIndex = 0;
  for (let m = SEGMENT.exec(path); m !== null; m = SEGMENT.exec(path)) {
    if (m[1] !== undefined) segments.push(m[1]);
    else if (m[2] !== undefined) segments.push(Number(m[2]));
    else {
      try {
        segments.push(JSON.parse(m[3]) as string);
      } catch {
        break;
      }
    }
  }
  return segments;
}

/** A JSON pointer's keys, unescaped: `/jobs/0/a~1b` → ['jobs', '0', 'a/b']; `` → []. */
export function pointerKeys(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
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
