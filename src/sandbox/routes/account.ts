import type { UserProfile, UserSummary } from '../../api/types.js';
import { fieldErrors, json, problem, type ApiContext, type ApiHandler, type Reply } from '../handler.js';
import { boolParam, compareValues, intParam, listEnvelope } from '../paging.js';
import type { Router } from '../router.js';

const USER_SORT: Record<string, keyof UserProfile> = {
  lastname: 'lastName',
  firstname: 'firstName',
  username: 'userName',
  email: 'emailAddress',
  lastloginutc: 'lastLogin',
  logincount: 'loginCount',
};
const TX_SORT: Record<string, 'id' | 'createdAt' | 'completedAt' | 'amountSettlement'> = {
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

function paging(
  ctx: ApiContext,
  defaultSize: number,
  sortMap: Record<string, string>,
  defaultSort: string,
  defaultDir: 'ASC' | 'DESC',
) {
  const page = intParam(ctx.query, 'page') ?? 1;
  const pageSize = intParam(ctx.query, 'pageSize') ?? defaultSize;
  const sortBy = ctx.query.get('sortBy') ?? defaultSort;
  const dir = (ctx.query.get('sortDirection') ?? defaultDir).toUpperCase();
  const errors: Record<string, string[]> = {};
  if (page === null || page < 1) errors.page = ['page must be a positive integer.'];
  if (pageSize === null || pageSize < 1) errors.pageSize = ['pageSize must be a positive integer.'];
  if (!sortMap[sortBy.toLowerCase()]) errors.sortBy = [`'${sortBy}' is not a valid sortBy value.`];
  if (dir !== 'ASC' && dir !== 'DESC') errors.sortDirection = ['sortDirection must be ASC or DESC.'];
  return {
    page: page as number,
    pageSize: pageSize as number,
    key: sortMap[sortBy.toLowerCase()],
    sign: dir === 'DESC' ? -1 : 1,
    errors,
  };
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
    const p = paging(ctx, 50, USER_SORT, 'LastName', 'ASC');
    const includeInactive = boolParam(ctx.query, 'includeInactive');
    if (includeInactive === null) p.errors.includeInactive = ['includeInactive must be true or false.'];
    if (Object.keys(p.errors).length) return fieldErrors(ctx.path, p.errors);
    const text = ctx.query.get('textFilter')?.trim().toLowerCase() ?? '';
    const key = p.key as keyof UserProfile;
    const list = ctx.customer.users
      .filter((u) => includeInactive === true || u.active)
      .filter(
        (u) =>
          !text || [u.userName, u.firstName, u.lastName, u.emailAddress].some((v) => v?.toLowerCase().includes(text)),
      )
      .sort((a, b) => compareValues(a[key], b[key]) * p.sign || a.id - b.id)
      .map(summary);
    return json(listEnvelope(list, p.page, p.pageSize, ctx.query.get('textFilter'), ctx.url));
  });

  r.add('GET', '/account/users/{userId}', (ctx) => {
    const denied = adminOnly(ctx);
    if (denied) return denied;
    const id = Number(ctx.params.userId);
    const u = /^\d+$/.test(ctx.params.userId) ? ctx.customer.users.find((x) => x.id === id) : undefined;
    return u ? json(u) : problem(404, `User ${ctx.params.userId} was not found.`, ctx.path);
  });

  r.add('GET', '/account/transactions', (ctx) => {
    const p = paging(ctx, 20, TX_SORT, 'Id', 'DESC');
    const completedOnly = boolParam(ctx.query, 'completedOnly');
    if (completedOnly === null) p.errors.completedOnly = ['completedOnly must be true or false.'];
    if (Object.keys(p.errors).length) return fieldErrors(ctx.path, p.errors);
    const text = ctx.query.get('textFilter')?.trim().toLowerCase() ?? '';
    const key = p.key as 'id';
    const list = ctx.customer.transactions
      .filter((t) => completedOnly !== true || t.completedAt !== null)
      .filter(
        (t) =>
          !text ||
          [String(t.id), t.cardName, t.transactionStatus, t.gatewayType, t.cardNumber].some((v) =>
            v?.toLowerCase().includes(text),
          ),
      )
      .sort((a, b) => compareValues(a[key], b[key]) * p.sign);
    return json(listEnvelope(list, p.page, p.pageSize, ctx.query.get('textFilter'), ctx.url));
  });

  r.add('GET', '/account/shipment-settings', (ctx) => json(ctx.customer.shipmentSettings));
}
