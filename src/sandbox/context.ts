import type { IncomingHttpHeaders } from 'node:http';
import type { AccountDef } from './data/accounts.js';
import type { RegionDef } from './data/regions.js';
import type { Reply } from './reply.js';
import type { CustomerState, World } from './state.js';

/** Everything an API route handler may read. The account is already authenticated. */
export interface ApiContext {
  world: World;
  region: RegionDef;
  account: AccountDef;
  customer: CustomerState;
  method: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** The request path (RFC 7807 `instance`). */
  path: string;
  /** The absolute request URL (paging links). */
  url: URL;
  now: Date;
}

export type ApiHandler = (ctx: ApiContext) => Reply | Promise<Reply>;
