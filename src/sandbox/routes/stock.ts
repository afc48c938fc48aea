import type { StockItem, StockShippingConfigSummary, StockVariant } from '../../api/types.js';
import { fieldErrors, json, problem, type ApiContext, type ApiHandler } from '../handler.js';
import { findStockByCode, MAX_STOCK_CODE_LENGTH, STOCK, STOCK_SHIPPING, type StockRecord } from '../data/stock.js';
import { round2 } from '../jobs/pricing.js';
import { boolParam, compareValues, intParam } from '../paging.js';
import type { Router } from '../router.js';

const activeConfigs = (id: number) => STOCK_SHIPPING.filter((c) => c.stockItemId === id && c.active);
const marketsOf = (id: number): string[] => [...new Set(activeConfigs(id).flatMap((c) => c.markets))];

function sortVariants(variants: StockVariant[], ctx: ApiContext): StockVariant[] {
  const col = ctx.query.get('variantSortColumn')?.toLowerCase();
  const desc = ctx.query.get('variantSortDirection')?.toLowerCase().startsWith('desc') ?? false;
  if (col !== 'variantcode' && col !== 'colour' && !desc) return variants;
  const key = col === 'colour' ? 'colour' : 'variantCode';
  return [...variants].sort((a, b) => compareValues(a[key], b[key]) * (desc ? -1 : 1));
}

function view(s: StockRecord, ctx: ApiContext, withConfigs: boolean): StockItem {
  const includePricing = boolParam(ctx.query, 'includePricing') === true;
  const item: StockItem = {
    ...s.item,
    stockVariants: sortVariants(s.item.stockVariants, ctx),
    markets: marketsOf(s.id),
    priceBands: includePricing
      ? s.basePriceBands.map((b) => ({ ...b, unitPrice: round2(b.unitPrice * ctx.region.priceFactor) }))
      : null,
  };
  if (withConfigs) {
    item.shippingConfigs = activeConfigs(s.id).map(
      ({ stockItemId: _i, active: _a, createdAt: _c, updatedAt: _u, ...rest }): StockShippingConfigSummary => ({
        ...rest,
        fulfilmentLocations: rest.fulfilmentLocations.map((l) => ({
          locationCode: l.locationCode,
          locationName: l.locationName,
        })),
      }),
    );
  }
  return item;
}

export function register(r: Router<ApiHandler>): void {
  r.add('GET', '/Stock', (ctx) => {
    const code = ctx.query.get('code');
    if (code !== null && code.length > MAX_STOCK_CODE_LENGTH) {
      return fieldErrors(ctx.path, { code: [`code must be at most ${MAX_STOCK_CODE_LENGTH} characters.`] });
    }
    const includeArchived = boolParam(ctx.query, 'includeArchived') === true;
    const filter = ctx.query.get('filter')?.trim().toLowerCase() ?? '';
    const markets = [
      ...new Set(
        (ctx.query.get('markets') ?? '')
          .split(',')
          .map((m) => m.trim().toUpperCase())
          .filter(Boolean),
      ),
    ];
    let list = STOCK.filter((s) => !s.hidden && (includeArchived || !s.archived));
    // `code` is exact and untrimmed: " GD5000" matches nothing.
    if (code !== null && code !== '') {
      list = list.filter((s) => s.item.stockCode === code || s.item.stockVariants.some((v) => v.variantCode === code));
    }
    if (filter) {
      list = list.filter((s) =>
        [s.item.stockCode, s.item.stockName, s.item.stockDescription, s.item.categoryName].some((v) =>
          v?.toLowerCase().includes(filter),
        ),
      );
    }
    if (markets.length) list = list.filter((s) => marketsOf(s.id).some((m) => markets.includes(m)));
    const col = ctx.query.get('stockSortColumn')?.toLowerCase();
    const desc = ctx.query.get('stockSortDirection')?.toLowerCase().startsWith('desc') ?? false;
    const key = (s: StockRecord): unknown =>
      col === 'stockcode' ? s.item.stockCode : col === 'stockname' ? s.item.stockName : s.item.rank;
    list = [...list].sort((a, b) => compareValues(key(a), key(b)) * (desc ? -1 : 1));
    const page = intParam(ctx.query, 'page');
    const pageSize = intParam(ctx.query, 'pageSize');
    if (page === null || pageSize === null || (page ?? 1) < 1 || (pageSize ?? 1) < 1) {
      return fieldErrors(ctx.path, { page: ['page and pageSize must be positive integers.'] });
    }
    if (page !== undefined || pageSize !== undefined) {
      const size = pageSize ?? 50;
      list = list.slice(((page ?? 1) - 1) * size, (page ?? 1) * size);
    }
    return json(list.map((s) => view(s, ctx, false)));
  });

  r.add('GET', '/Stock/{code}', (ctx) => {
    const code = ctx.params.code;
    if (code.length > MAX_STOCK_CODE_LENGTH)
      return fieldErrors(ctx.path, { code: [`code must be at most ${MAX_STOCK_CODE_LENGTH} characters.`] });
    const s = findStockByCode(code);
    const includeArchived = boolParam(ctx.query, 'includeArchived') === true;
    if (!s || s.hidden || (s.archived && !includeArchived))
      return problem(404, `Stock item '${code}' was not found.`, ctx.path);
    return json(view(s, ctx, true));
  });

  r.add('GET', '/stock/shipping', (ctx) => {
    const market = ctx.query.get('market')?.trim().toUpperCase();
    if (!market) return fieldErrors(ctx.path, { market: ['The market field is required.'] });
    return json(STOCK_SHIPPING.filter((c) => c.active && c.markets.includes(market)));
  });

  r.add('GET', '/stock/{stockItemId}/shipping', (ctx) => {
    const raw = ctx.params.stockItemId;
    if (!/^\d+$/.test(raw) || Number(raw) < 1) {
      return fieldErrors(ctx.path, { stockItemId: [`The value '${raw}' is not a valid stock item id.`] });
    }
    const id = Number(raw);
    const s = STOCK.find((x) => x.id === id);
    if (!s || s.hidden) return json([]);
    return json(activeConfigs(id));
  });
}
