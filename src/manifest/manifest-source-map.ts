import { formatPath, parsePath, type PathSegment } from './field-path.js';
import { isPlainObject } from './merge-defaults.js';
import type { SourceLocation, SourceMap } from './model.js';

/**
 * The SourceMap of a built manifest: paths are the merged jobs' paths, but a value a job
 * got from `defaults` is located where it is written — in `defaults:` — not at the job.
 */
export class ManifestSourceMap implements SourceMap {
  constructor(
    private readonly raw: SourceMap,
    private readonly doc: unknown,
  ) {}

  locate(path: string): SourceLocation {
    return this.raw.locate(this.where(path));
  }

  locateKey(path: string): SourceLocation {
    const where = this.where(path);
    return this.raw.locateKey ? this.raw.locateKey(where) : this.raw.locate(where);
  }

  private where(path: string): string {
    const segments = parsePath(path);
    if (segments[0] !== 'jobs' || typeof segments[1] !== 'number' || segments.length < 3 || !isPlainObject(this.doc))
      return path;
    const rest = segments.slice(2);
    if (has(this.doc, segments)) return path;
    return has(this.doc, ['defaults', ...rest]) ? formatPath(['defaults', ...rest]) : path;
  }
}

function has(doc: unknown, segments: PathSegment[]): boolean {
  let node = doc;
  for (const seg of segments) {
    if (Array.isArray(node) && typeof seg === 'number' && seg < node.length) node = node[seg];
    else if (isPlainObject(node) && typeof seg === 'string' && Object.hasOwn(node, seg)) node = node[seg];
    else return false;
  }
  return true;
}
