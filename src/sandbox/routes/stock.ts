import type { StockItem, StockShippingConfigSummary, StockVariant } from '../../api/types.js';
import { fieldErrors, json, problem, type ApiContext, type ApiHandler } from '../handler.js';
import { hasCode, MAX_STOCK_CODE_LENGTH, STOCK, STOCK_SHIPPING, type StockRecord } from '../data/stock.js';
import { round2 } from '../jobs/pricing.js';
import { compareValues, containsText, optionalPage, QueryReader } from '../paging.js';
import type { Router } from '../router.js';

const activeConfigs = (id: number) => STOCK_SHIPPING.filter((c) => c.stockItemId === id && c.active);
/** A boolean option that is false unless it says `true` (a malformed one is not an error here). */
const flag = (ctx: ApiContext, name: string): boolean => ctx.query.get(name)?.trim().toLowerCase() === 'true';
const codeTooLong = (ctx: ApiContext) =>
  fieldErrors(ctx.path, { code: [`code must be at most ${MAX_STOCK_CODE_LENGTH} characters.`] });
const marketsOf = (id: number): string[] => [...new Set(activeConfigs(id).flatMap((c) => c.markets))];

function sortVariants(variants: StockVariant[], ctx: ApiContext): StockVariant[] {
  const col = ctx.query.get('variantSortColumn')?.toLowerCase();
  const desc = ctx.query.get('variantSortDirection')?.toLowerCase().startsWith('desc') ?? false;
  if (col !== 'variantcode' && col !== 'colour' && !desc) return variants;
  const key = col === 'colour' ? 'colour' : 'variantCode';
  return [...variants].sort((a, b) => compareValues(a[key], b[key]) * (desc ? -1 : 1));
}

function view(s: StockRecord, ctx: ApiContext, withConfigs: boolean): StockItem {
  const item: StockItem = {
    ...s.item,
    stockVariants: sortVariants(s.item.stockVariants, ctx),
    markets: marketsOf(s.id),
    priceBands: flag(ctx, 'includePricing')
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
    if (code !== null && code.length > MAX_STOCK_CODE_LENGTH) return codeTooLong(ctx);
    const q = new QueryReader(ctx);
    const page = q.int('page', 1);
    const pageSize = q.int('pageSize', 1);
    const invalid = q.invalid();
    if (invalid) return invalid;
    const filter = ctx.query.get('filter')?.trim().toLowerCase() ?? '';
    const markets = new Set(q.list('markets').map((m) => m.toUpperCase()));
    const list = STOCK.filter(
      (s) =>
        !s.hidden &&
        (!s.archived || flag(ctx, 'includeArchived')) &&
        // `code` is exact and untrimmed: " GD5000" matches nothing.
        (!code || hasCode(s, code)) &&
        containsText(filter, [s.item.stockCode, s.item.stockName, s.item.stockDescription, s.item.categoryName]) &&
        (markets.size === 0 || marketsOf(s.id).some((m) => markets.has(m))),
    );
    const col = ctx.query.get('stockSortColumn')?.toLowerCase();
    const desc = ctx.query.get('stockSortDirection')?.toLowerCase().startsWith('desc') ?? false;
    const key = (s: StockRecord): unknown =>
      col === 'stockcode' ? s.item.stockCode : col === 'stockname' ? s.item.stockName : s.item.rank;
    list.sort((a, b) => compareValues(key(a), key(b)) * (desc ? -1 : 1));
    return json(optionalPage(list, page, pageSize).map((s) => view(s, ctx, false)));
  });

  r.add('GET', '/Stock/{code}', (ctx) => {
    const code = ctx.params.code;
    if (code.length > MAX_STOCK_CODE_LENGTH) return codeTooLong(ctx);
    const s = STOCK.find((x) => hasCode(x, code));
    if (!s || s.hidden || (s.archived && !flag(ctx, 'includeArchived')))
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
    return json(s && !s.hidden ? activeConfigs(id) : []);
  });
}
