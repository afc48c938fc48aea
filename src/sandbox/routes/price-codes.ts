import type { ProcessesResponse } from '../../api/types.js';
import { json, problem, type ApiHandler } from '../handler.js';
import { CUSTOM_SIZE_LIMITS, customSizeCode } from '../data/catalogue.js';
import { containsText, optionalPage, QueryReader } from '../paging.js';
import type { Router } from '../router.js';

export function register(r: Router<ApiHandler>): void {
  r.add('GET', '/PriceCodes/processes', (ctx) =>
    json({ processes: ctx.customer.processes } satisfies ProcessesResponse),
  );

  // Codes with metadata attributes (custom sizes) are omitted from the list, per the spec.
  r.add('GET', '/PriceCodes/price-codes', (ctx) => {
    const q = new QueryReader(ctx);
    const page = q.int('page', 1);
    const pageSize = q.int('pageSize', 1);
    const invalid = q.invalid();
    if (invalid) return invalid;
    const filter = ctx.query.get('filter')?.trim().toLowerCase() ?? '';
    const list = ctx.customer.catalogue.filter(
      (p) =>
        !p.hasMetaDataAttributes &&
        containsText(filter, [p.priceCode, p.name, p.description, p.processCode, p.categoryName]),
    );
    return json(optionalPage(list, page, pageSize));
  });

  r.add('GET', '/PriceCodes/{priceCode}', (ctx) => {
    const code = ctx.params.priceCode;
    const pc = ctx.customer.catalogue.find((p) => p.priceCode === code);
    if (!pc) return problem(404, `Price code '${code}' was not found.`, ctx.path);
    if (!pc.hasMetaDataAttributes) return json(pc);
    const q = new QueryReader(ctx);
    const dim = (name: 'dgX' | 'dgY'): number => {
      const raw = ctx.query.get(name);
      const n = Number(raw);
      if (raw === null || raw.trim() === '')
        q.fail(name, `${name} is required for '${code}' (it has metadata attributes).`);
      else if (!Number.isFinite(n) || n <= 0 || n > CUSTOM_SIZE_LIMITS[name])
        q.fail(name, `${name} must be a number greater than 0 and at most ${CUSTOM_SIZE_LIMITS[name]}.`);
      return n;
    };
    const size = { dgX: dim('dgX'), dgY: dim('dgY') };
    return q.invalid() ?? json(customSizeCode(ctx.customer.region, ctx.customer.def.tierFactor, size));
  });
}
