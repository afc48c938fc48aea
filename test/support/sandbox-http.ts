import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

/** Monday 2026-03-02 15:00 UTC = 09:00 in Dallas: before the 14:00 cut-off. */
export const NOW = new Date('2026-03-02T15:00:00Z');

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function raw(url: string, init: RequestInit = {}): Promise<Res> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body, text };
}

export async function tokenFor(sb: Sandbox, name: string, region?: string): Promise<string> {
  const acct = sb.accounts.find((a) => a.name === name);
  if (!acct) throw new Error(`no account ${name}`);
  const r = sb.regions[region ?? acct.region];
  const res = await raw(`${r.authUrl}/realms/${r.realm}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: acct.clientId,
      client_secret: acct.clientSecret,
    }),
  });
  if (res.status !== 200) throw new Error(`token ${res.status} ${res.text}`);
  return res.body.access_token as string;
}

/** An authenticated caller for one demo account. */
export class Caller {
  private token: string | null = null;

  constructor(
    readonly sb: Sandbox,
    readonly name: string,
  ) {}

  get region(): string {
    return this.sb.accounts.find((a) => a.name === this.name)?.region as string;
  }

  async call(
    method: string,
    path: string,
    opts: { json?: unknown; headers?: Record<string, string>; body?: string } = {},
  ): Promise<Res> {
    this.token ??= await tokenFor(this.sb, this.name);
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, ...(opts.headers ?? {}) };
    let body: string | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    return raw(`${this.sb.regions[this.region].baseUrl}${path}`, { method, headers, body });
  }

  get(path: string): Promise<Res> {
    return this.call('GET', path);
  }

  post(path: string, json?: unknown, headers?: Record<string, string>): Promise<Res> {
    return this.call('POST', path, { json, headers });
  }
}

export async function start(opts: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ now: NOW, ...opts });
}

export const enc = encodeURIComponent;

/** A valid US job: one reorder of A10001 shipped by UPS Ground to Austin, TX. */
export function usJob(over: Record<string, unknown> = {}): Record<string, any> {
  return {
    orderNumber: 'PO-1',
    description: 'Spring team kit',
    dateDue: '2026-03-20',
    deliveryAddress: {
      deliveryMethod: 'UPSGND',
      contactName: 'Ana Ruiz',
      streetAddress: '1 Main St',
      city: 'Austin',
      stateCode: 'TX',
      postalCode: '78701',
      countryCodeISO2: 'US',
    },
    items: [{ itemType: 'Asset', code: 'A10001', quantity: 50 }],
    ...over,
  };
}

export const DTF10 = 'DTF Full Color 10" x 10"';

export function dtfLine(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    itemType: 'PriceCode',
    code: DTF10,
    quantity: 100,
    customerReference: 'front-logo',
    attributes: { Colors: '4' },
    ...over,
  };
}
