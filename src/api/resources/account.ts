import { paginateList } from '../paginate.js';
import type { Transport } from '../transport.js';
import type {
  AccountProfile,
  ListEnvelope,
  PaymentTransaction,
  ShipmentSettings,
  TransactionsQuery,
  UserProfile,
  UserSummary,
  UsersQuery,
} from '../types.js';

export interface AccountApi {
  /** GET /account */
  get(): Promise<AccountProfile>;
  /** GET /account/user: the calling user. */
  user(): Promise<UserProfile>;
  /** GET /account/users: one page. Account administrators only (others get 403). */
  users(query?: UsersQuery): Promise<ListEnvelope<UserSummary>>;
  iterateUsers(query?: UsersQuery): AsyncGenerator<UserSummary, void, undefined>;
  /** GET /account/users/{userId}. Administrators only. */
  userById(userId: number): Promise<UserProfile>;
  /** GET /account/transactions: one page. */
  transactions(query?: TransactionsQuery): Promise<ListEnvelope<PaymentTransaction>>;
  iterateTransactions(query?: TransactionsQuery): AsyncGenerator<PaymentTransaction, void, undefined>;
  /** GET /account/shipment-settings */
  shipmentSettings(): Promise<ShipmentSettings>;
}

export function accountApi(t: Transport): AccountApi {
  const users = (query: UsersQuery = {}): Promise<ListEnvelope<UserSummary>> =>
    t.request({ method: 'GET', path: '/account/users', query: { ...query } });
  const transactions = (query: TransactionsQuery = {}): Promise<ListEnvelope<PaymentTransaction>> =>
    t.request({ method: 'GET', path: '/account/transactions', query: { ...query } });
  return {
    get: () => t.request({ method: 'GET', path: '/account' }),
    user: () => t.request({ method: 'GET', path: '/account/user' }),
    users,
    iterateUsers: (query = {}) => paginateList((page) => users({ ...query, page }), query.page ?? 1, '/account/users'),
    userById: (userId) => t.request({ method: 'GET', path: `/account/users/${encodeURIComponent(String(userId))}` }),
    transactions,
    iterateTransactions: (query = {}) =>
      paginateList((page) => transactions({ ...query, page }), query.page ?? 1, '/account/transactions'),
    shipmentSettings: () => t.request({ method: 'GET', path: '/account/shipment-settings' }),
  };
}
