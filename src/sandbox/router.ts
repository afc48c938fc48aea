/**
 * A tiny router: templates like `/PriceCodes/{priceCode}`. Literal segments match
 * case-insensitively (the real API is ASP.NET, whose routing ignores case, which is why
 * the spec mixes `/Stock` and `/stock`); parameters are percent-decoded per segment, so a
 * price code containing `"`, spaces or an encoded `/` arrives intact. A route with more
 * literal segments is tried first: `/Jobs/active` before `/Jobs/{jobNumber}`.
 */
export interface Route<H> {
  method: string;
  /** As written in the spec, e.g. `/Jobs/{jobNumber}`; also the call-count key. */
  template: string;
  handler: H;
}

type MatchResult<H> =
  | { kind: 'found'; match: { route: Route<H>; params: Record<string, string> } }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

interface Compiled<H> {
  route: Route<H>;
  /** A literal in lower case, or a parameter's name. */
  segments: ({ literal: string } | { param: string })[];
  literals: number;
}

export class Router<H> {
  private readonly compiled: Compiled<H>[] = [];

  add(method: string, template: string, handler: H): this {
    const segments = split(template).map((s) => {
      const m = /^\{(\w+)\}$/.exec(s);
      return m ? { param: m[1] } : { literal: s.toLowerCase() };
    });
    const literals = segments.filter((s) => 'literal' in s).length;
    this.compiled.push({ route: { method, template, handler }, segments, literals });
    this.compiled.sort((a, b) => b.literals - a.literals);
    return this;
  }

  /** `rawPath` is still percent-encoded (straight from the request line). */
  match(method: string, rawPath: string): MatchResult<H> {
    let parts: string[];
    try {
      parts = split(rawPath).map((p) => decodeURIComponent(p));
    } catch {
      return { kind: 'not-found' };
    }
    const allowed = new Set<string>();
    for (const { route, segments } of this.compiled) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const ok = segments.every((s, i) => {
        if ('literal' in s) return s.literal === parts[i].toLowerCase();
        params[s.param] = parts[i];
        return true;
      });
      if (!ok) continue;
      if (route.method === method) return { kind: 'found', match: { route, params } };
      allowed.add(route.method);
    }
    return allowed.size ? { kind: 'method-not-allowed', allowed: [...allowed] } : { kind: 'not-found' };
  }
}

const split = (path: string): string[] => path.split('/').filter(Boolean);
