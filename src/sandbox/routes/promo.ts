import { json, type ApiHandler } from '../handler.js';
import { QueryReader } from '../paging.js';
import { checkPromo } from '../data/promos.js';
import type { Router } from '../router.js';

export function register(r: Router<ApiHandler>): void {
  // 200 even when invalid: callers must read isValid.
  r.add('GET', '/promocode/validate/{code}', (ctx) =>
    json(checkPromo(ctx.params.code, new QueryReader(ctx).list('processCodes'), ctx.now.getTime(), ctx.world.startMs)),
  );
}
