import { deriveHex } from '../random.js';
import type { RegionCode } from './regions.js';

/** A credential (client) of a customer; its name is its client id. Several credentials may share one customer. */
export interface AccountDef {
  name: string;
  region: RegionCode;
  customerId: number;
  role: 'admin' | 'user';
  /** The user the credential acts as (GET /account/user, default customerUserId). */
  userId: number;
}

/** A wholesale customer: owns jobs, assets, users. */
export interface CustomerDef {
  customerId: number;
  region: RegionCode;
  name: string;
  priceTierCode: string;
  /** Multiplies the region's price ladder (prices are per account). */
  tierFactor: number;
  /** Letter of this customer's asset tags and the first number: A10001, B40001, N30001… */
  assetPrefix: string;
  assetStart: number;
  /** How many assets to generate (including the fixed named ones). */
  assetCount: number;
  /** First user id; users are generated from here. */
  firstUserId: number;
}

export const CUSTOMERS: readonly CustomerDef[] = [
  {
    customerId: 1001,
    region: 'us',
    name: 'Demo Apparel Co (US)',
    priceTierCode: 'GOLD',
    tierFactor: 1,
    assetPrefix: 'A',
    assetStart: 10001,
    assetCount: 400,
    firstUserId: 501,
  },
  {
    customerId: 1002,
    region: 'us',
    name: 'Other Prints LLC',
    priceTierCode: 'STANDARD',
    tierFactor: 1.1,
    assetPrefix: 'B',
    assetStart: 40001,
    assetCount: 60,
    firstUserId: 601,
  },
  {
    customerId: 2001,
    region: 'nz',
    name: 'Kiwi Teamwear Ltd',
    priceTierCode: 'GOLD',
    tierFactor: 1,
    assetPrefix: 'N',
    assetStart: 30001,
    assetCount: 80,
    firstUserId: 701,
  },
  {
    customerId: 3001,
    region: 'uk',
    name: 'Albion Kit Ltd',
    priceTierCode: 'GOLD',
    tierFactor: 1,
    assetPrefix: 'U',
    assetStart: 50001,
    assetCount: 80,
    firstUserId: 801,
  },
];

export const ACCOUNTS: readonly AccountDef[] = [
  { name: 'us-demo', region: 'us', customerId: 1001, role: 'admin', userId: 501 },
  { name: 'us-demo-user', region: 'us', customerId: 1001, role: 'user', userId: 502 },
  { name: 'us-other', region: 'us', customerId: 1002, role: 'admin', userId: 601 },
  { name: 'nz-demo', region: 'nz', customerId: 2001, role: 'admin', userId: 701 },
  { name: 'uk-demo', region: 'uk', customerId: 3001, role: 'admin', userId: 801 },
];

/** Deterministic from the seed, so a script can start the sandbox twice and reuse secrets. */
export function clientSecret(seed: number, name: string): string {
  return `sbx_${deriveHex(seed, `secret:${name}`, 32)}`;
}

export function customerDef(customerId: number): CustomerDef {
  const c = CUSTOMERS.find((x) => x.customerId === customerId);
  if (!c) throw new Error(`no customer ${customerId}`);
  return c;
}
