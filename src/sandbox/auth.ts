import { randomBytes } from 'node:crypto';
import type { AccountDef } from './data/accounts.js';
import type { SandboxClock } from './clock.js';

interface TokenRecord {
  account: AccountDef;
  expiresAtMs: number;
}

type TokenCheck = { ok: true; account: AccountDef } | { ok: false; reason: string };

/**
 * Opaque bearer tokens. A token is bound to its region and account; expiry reads the
 * sandbox clock, so advancing the clock (or expireAll) expires tokens without waiting.
 */
export class TokenStore {
  private readonly tokens = new Map<string, TokenRecord>();

  constructor(
    private readonly clock: SandboxClock,
    private readonly ttlSeconds: number,
  ) {}

  issue(account: AccountDef): { access_token: string; expires_in: number } {
    const token = `sbx.${account.region}.${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, { account, expiresAtMs: this.clock.nowMs() + this.ttlSeconds * 1000 });
    return { access_token: token, expires_in: this.ttlSeconds };
  }

  /** `authorization` is the raw header. */
  verify(authorization: string | undefined, region: string): TokenCheck {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!m) return { ok: false, reason: 'No bearer token was sent.' };
    const rec = this.tokens.get(m[1]);
    // A token of another region gets the answer of an unknown one: it is useless here.
    if (rec?.account.region !== region) return { ok: false, reason: 'The bearer token is not valid.' };
    if (this.clock.nowMs() >= rec.expiresAtMs) return { ok: false, reason: 'The bearer token has expired.' };
    return { ok: true, account: rec.account };
  }

  expireAll(): number {
    const now = this.clock.nowMs();
    for (const rec of this.tokens.values()) rec.expiresAtMs = Math.min(rec.expiresAtMs, now);
    return this.tokens.size;
  }
}
