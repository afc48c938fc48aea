import type { PriceCodeDto, ProcessesResponse } from '../../api/types.js';
import { fieldErrors, json, problem, type ApiHandler } from '../handler.js';
import { CUSTOM_SIZE_LIMITS, customSizeCode } from '../data/catalogue.js';
import { intParam } from '../paging.js';
import type { Router } from '../router.js';

export function register(r: Router<ApiHandler>): void {
  r.add('GET', '/PriceCodes/processes', (ctx) =>
    json({ processes: ctx.customer.processes } satisfies ProcessesResponse),
  );

  // Codes with metadata attributes (custom sizes) are omitted from the list, per the spec.
  r.add('GET', '/PriceCodes/price-codes', (ctx) => {
    const page = intParam(ctx.query, 'page');
    const pageSize = intParam(ctx.query, 'pageSize');
    const errors: Record<string, string[]> = {};
    if (page === null || (page !== undefined && page < 1)) errors.page = ['page must be a positive integer.'];
    if (pageSize === null || (pageSize !== undefined && pageSize < 1))
      errors.pageSize = ['pageSize must be a positive integer.'];
    if (Object.keys(errors).length) return fieldErrors(ctx.path, errors);
    const filter = ctx.query.get('filter')?.trim().toLowerCase() ?? '';
    let list: PriceCodeDto[] = ctx.customer.catalogue.filter((p) => !p.hasMetaDataAttributes);
    if (filter) {
      list = list.filter((p) =>
        [p.priceCode, p.name, p.description, p.processCode, p.categoryName].some((v) =>
          v?.toLowerCase().includes(filter),
        ),
      );
    }
    if (page !== undefined || pageSize !== undefined) {
      const size = pageSize ?? 50;
      const p = page ?? 1;
      list = list.slice((p - 1) * size, p * size);
    }
    return json(list);
  });

  r.add('GET', '/PriceCodes/{priceCode}', (ctx) => {
    const code = ctx.params.priceCode;
    const pc = ctx.customer.catalogue.find((p) => p.priceCode === code);
    if (!pc) return problem(404, `Price code '${code}' was not found.`, ctx.path);
    if (!pc.hasMetaDataAttributes) return json(pc);
    const errors: Record<string, string[]> = {};
    const dim = (name: 'dgX' | 'dgY'): number | null => {
      const raw = ctx.query.get(name);
      if (raw === null || raw.trim() === '') {
        errors[name] = [`${name} is required for '${code}' (it has metadata attributes).`];
        return null;
      }
      const n = Number(raw);
      if (!Number.isFinite(n) || n <= 0 || n > CUSTOM_SIZE_LIMITS[name]) {
        errors[name] = [`${name} must be a number greater than 0 and at most ${CUSTOM_SIZE_LIMITS[name]}.`];
        return null;
      }
      return n;
    };
    const dgX = dim('dgX');
    const dgY = dim('dgY');
    if (dgX === null || dgY === null) return fieldErrors(ctx.path, errors);
    return json(customSizeCode(ctx.customer.region, ctx.customer.def.tierFactor, { dgX, dgY }));
  });
}
