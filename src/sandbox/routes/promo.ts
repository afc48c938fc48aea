import { json, type ApiHandler } from '../handler.js';
import { checkPromo } from '../promo-check.js';
import type { Router } from '../router.js';

export function register(r: Router<ApiHandler>): void {
  // 200 even when invalid: callers must read isValid.
  r.add('GET', '/promocode/validate/{code}', (ctx) => {
    const raw = ctx.query.get('processCodes');
    const processCodes = raw
      ? raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : null;
    return json(checkPromo(ctx.params.code, processCodes, ctx.now.getTime(), ctx.world.startMs));
  });
}
