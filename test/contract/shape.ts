/**
 * Compares the shape of a JSON value with a fixture's: the same keys (recursively), the same
 * JSON types, and every array element shaped like the fixture's first element. Values are not
 * compared. Each difference names its exact path (`$.lines[0].unitPrice`), so a failing
 * contract test says what to fix.
 *
 * Rules name paths as patterns: `$` the body, `.key` a member, `[]` every element.
 * - `optional`: keys that may be absent (the spec: "omitted", "not every field is present").
 * - `extra`: objects that may carry keys the fixture lacks (the spec: "not shown", or listed
 *   elsewhere such as the RFC 7807 members of every failure).
 * - `anyType`: values whose JSON type the spec does not state.
 *
 * Null on either side matches any type: the spec marks most fields nullable, and whether a
 * null is allowed is a value, not a shape.
 */
export interface ShapeRules {
  optional?: readonly string[];
  extra?: Readonly<Record<string, string>> | readonly string[];
  anyType?: readonly string[];
}

export interface ShapeReport {
  /** Each difference: `<path>: <what>`. */
  differences: string[];
  /**
   * Arrays (as pattern paths) the actual value always left empty where the fixture has
   * elements: their element shape went unchecked.
   */
  unchecked: string[];
}

type JsonType = 'null' | 'array' | 'object' | 'string' | 'number' | 'boolean' | 'other';

function jsonType(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return t === 'object' || t === 'string' || t === 'number' || t === 'boolean' ? t : 'other';
}

export function compareShape(expected: unknown, actual: unknown, rules: ShapeRules = {}): ShapeReport {
  const optional = new Set(rules.optional ?? []);
  const extra = new Set(Array.isArray(rules.extra) ? rules.extra : Object.keys(rules.extra ?? {}));
  const anyType = new Set(rules.anyType ?? []);
  const report: ShapeReport = { differences: [], unchecked: [] };
  const emptyArrays = new Set<string>();
  const filledArrays = new Set<string>();

  const walk = (exp: unknown, act: unknown, pattern: string, path: string): void => {
    if (anyType.has(pattern)) return;
    const te = jsonType(exp);
    const ta = jsonType(act);
    if (te === 'null' || ta === 'null') return;
    if (te !== ta) {
      report.differences.push(`${path}: expected ${te}, got ${ta}`);
      return;
    }
    if (te === 'array') {
      const e = exp as unknown[];
      const a = act as unknown[];
      if (e.length === 0) return;
      (a.length === 0 ? emptyArrays : filledArrays).add(pattern);
      for (const [i, el] of a.entries()) walk(e[0], el, `${pattern}[]`, `${path}[${i}]`);
      return;
    }
    if (te !== 'object') return;
    const e = exp as Record<string, unknown>;
    const a = act as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!Object.hasOwn(a, key)) {
        if (!optional.has(`${pattern}.${key}`)) report.differences.push(`${path}.${key}: missing`);
        continue;
      }
      walk(e[key], a[key], `${pattern}.${key}`, `${path}.${key}`);
    }
    if (extra.has(pattern)) return;
    for (const key of Object.keys(a)) {
      if (!Object.hasOwn(e, key)) report.differences.push(`${path}.${key}: not in the spec`);
    }
  };

  walk(expected, actual, '$', '$');
  report.unchecked = [...emptyArrays].filter((p) => !filledArrays.has(p));
  return report;
}
