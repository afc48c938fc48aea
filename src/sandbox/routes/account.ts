import type { PaymentTransaction, UserProfile, UserSummary } from '../../api/types.js';
import { json, problem, type ApiContext, type ApiHandler, type Reply } from '../handler.js';
import { compareValues, containsText, listEnvelope, QueryReader } from '../paging.js';
import type { Router } from '../router.js';

const USER_SORT: Record<string, keyof UserProfile> = {
  lastname: 'lastName',
  firstname: 'firstName',
  username: 'userName',
  email: 'emailAddress',
  lastloginutc: 'lastLogin',
  logincount: 'loginCount',
};
const TX_SORT: Record<string, keyof PaymentTransaction> = {
  id: 'id',
  createdat: 'createdAt',
  completedat: 'completedAt',
  amountsettlement: 'amountSettlement',
};

const summary = (u: UserProfile): UserSummary => ({
  id: u.id,
  guid: u.guid,
  userName: u.userName,
  firstName: u.firstName,
  lastName: u.lastName,
  emailAddress: u.emailAddress,
  active: u.active,
  locationName: u.locationName,
  usernameLoginOnly: u.usernameLoginOnly,
  lastLogin: u.lastLogin,
  loginCount: u.loginCount,
});

/** Account administrator only: an ordinary user credential gets 403. */
function adminOnly(ctx: ApiContext): Reply | null {
  return ctx.account.role === 'admin'
    ? null
    : problem(403, 'This operation requires the account administrator role.', ctx.path);
}

/** The paging and sorting query of the account lists. */
function listQuery<K>(
  ctx: ApiContext,
  defaultSize: number,
  sortMap: Record<string, K>,
  defaultSort: string,
  defaultDir: 'ASC' | 'DESC',
) {
  const q = new QueryReader(ctx);
  const page = q.int('page', 1) ?? 1;
  const pageSize = q.int('pageSize', 1) ?? defaultSize;
  const sortBy = ctx.query.get('sortBy') ?? defaultSort;
  const dir = (ctx.query.get('sortDirection') ?? defaultDir).toUpperCase();
  if (!sortMap[sortBy.toLowerCase()]) q.fail('sortBy', `'${sortBy}' is not a valid sortBy value.`);
  if (dir !== 'ASC' && dir !== 'DESC') q.fail('sortDirection', 'sortDirection must be ASC or DESC.');
  const text = ctx.query.get('textFilter')?.trim().toLowerCase() ?? '';
  return { q, page, pageSize, key: sortMap[sortBy.toLowerCase()], sign: dir === 'DESC' ? -1 : 1, text };
}

export function register(r: Router<ApiHandler>): void {
  r.add('GET', '/account', (ctx) => json(ctx.customer.profile));

  r.add('GET', '/account/user', (ctx) => {
    const u = ctx.customer.users.find((x) => x.id === ctx.account.userId);
    return u ? json(u) : problem(404, 'User not found.', ctx.path);
  });

  r.add('GET', '/account/users', (ctx) => {
    const denied = adminOnly(ctx);
    if (denied) return denied;
    const { q, page, pageSize, key, sign, text } = listQuery(ctx, 50, USER_SORT, 'LastName', 'ASC');
    const includeInactive = q.bool('includeInactive');
    const invalid = q.invalid();
    if (invalid) return invalid;
    const list = ctx.customer.users
      .filter((u) => includeInactive === true || u.active)
      .filter((u) => containsText(text, [u.userName, u.firstName, u.lastName, u.emailAddress]))
      .sort((a, b) => compareValues(a[key], b[key]) * sign || a.id - b.id)
      .map(summary);
    return json(listEnvelope(list, page, pageSize, ctx.query.get('textFilter'), ctx.url));
  });

  r.add('GET', '/account/users/{userId}', (ctx) => {
    const denied = adminOnly(ctx);
    if (denied) return denied;
    const id = Number(ctx.params.userId);
    const u = /^\d+$/.test(ctx.params.userId) ? ctx.customer.users.find((x) => x.id === id) : undefined;
    return u ? json(u) : problem(404, `User ${ctx.params.userId} was not found.`, ctx.path);
  });

  r.add('GET', '/account/transactions', (ctx) => {
    const { q, page, pageSize, key, sign, text } = listQuery(ctx, 20, TX_SORT, 'Id', 'DESC');
    const completedOnly = q.bool('completedOnly');
    const invalid = q.invalid();
    if (invalid) return invalid;
    const list = ctx.customer.transactions
      .filter((t) => completedOnly !== true || t.completedAt !== null)
      .filter((t) => containsText(text, [String(t.id), t.cardName, t.transactionStatus, t.gatewayType, t.cardNumber]))
      .sort((a, b) => compareValues(a[key], b[key]) * sign);
    return json(listEnvelope(list, page, pageSize, ctx.query.get('textFilter'), ctx.url));
  });

  r.add('GET', '/account/shipment-settings', (ctx) => json(ctx.customer.shipmentSettings));
}
