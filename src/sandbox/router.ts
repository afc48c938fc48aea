/**
 * A tiny router: templates like `/PriceCodes/{priceCode}`. Literal segments match
 * case-insensitively (the real API is ASP.NET, whose routing ignores case, which is why
 * the spec mixes `/Stock` and `/stock`); parameters are percent-decoded per segment, so a
 * price code containing `"`, spaces or an encoded `/` arrives intact.
 */
export interface Route<H> {
  method: string;
  /** As written in the spec, e.g. `/Jobs/{jobNumber}`; also the call-count key. */
  template: string;
  handler: H;
}

export interface RouteMatch<H> {
  route: Route<H>;
  params: Record<string, string>;
}

export type MatchResult<H> =
  | { kind: 'found'; match: RouteMatch<H> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' }
  | { kind: 'bad-path' };

interface Compiled<H> {
  route: Route<H>;
  segments: { literal: string | null; param: string | null }[];
  literals: number;
}

export class Router<H> {
  private readonly compiled: Compiled<H>[] = [];

  add(method: string, template: string, handler: H): this {
    const segments = split(template).map((s) => {
      const m = /^\{(\w+)\}$/.exec(s);
      return m ? { literal: null, param: m[1] } : { literal: s.toLowerCase(), param: null };
    });
    this.compiled.push({
      route: { method, template, handler },
      segments,
      literals: segments.filter((s) => s.literal).length,
    });
    return this;
  }

  /** `rawPath` is still percent-encoded (straight from the request line). */
  match(method: string, rawPath: string): MatchResult<H> {
    let parts: string[];
    try {
      parts = split(rawPath).map((p) => decodeURIComponent(p));
    } catch {
      return { kind: 'bad-path' };
    }
    const candidates: { c: Compiled<H>; params: Record<string, string> }[] = [];
    for (const c of this.compiled) {
      if (c.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const ok = c.segments.every((s, i) => {
        if (s.literal !== null) return s.literal === parts[i].toLowerCase();
        params[s.param as string] = parts[i];
        return parts[i].length > 0;
      });
      if (ok) candidates.push({ c, params });
    }
    if (candidates.length === 0) return { kind: 'not-found' };
    // Most literal segments wins: `/Jobs/active` beats `/Jobs/{jobNumber}`.
    const best = Math.max(...candidates.map((x) => x.c.literals));
    const top = candidates.filter((x) => x.c.literals === best);
    const hit = top.find((x) => x.c.route.method === method);
    if (hit) return { kind: 'found', match: { route: hit.c.route, params: hit.params } };
    const other = candidates.find((x) => x.c.route.method === method);
    if (other) return { kind: 'found', match: { route: other.c.route, params: other.params } };
    return { kind: 'method-not-allowed', allowed: [...new Set(candidates.map((x) => x.c.route.method))] };
  }
}

function split(path: string): string[] {
  const trimmed = path.replace(/^\/+/, '').replace(/\/+$/, '');
  return trimmed === '' ? [] : trimmed.split('/');
}
