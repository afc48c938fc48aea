import type { CreatedJobRecord, FaultRule } from './admin-types.js';

/** Typed client for the sandbox's unauthenticated test controls under `{url}/_sandbox/`. */
export class SandboxAdmin {
  private readonly base: string;

  constructor(url: string) {
    this.base = `${url.replace(/\/+$/, '')}/_sandbox`;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`sandbox admin ${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Back to the freshly started state: data, jobs, clock offset, call counts, faults. Tokens stay valid. */
  async reset(): Promise<void> {
    await this.call('POST', '/reset');
  }

  /** Every job created through POST /Jobs, with the exact request body received. */
  jobs(): Promise<CreatedJobRecord[]> {
    return this.call('GET', '/jobs');
  }

  /** Calls per `"METHOD /route-template"` (e.g. `"POST /Jobs"`, `"POST token"`), summed over regions. */
  calls(): Promise<Record<string, number>> {
    return this.call('GET', '/calls');
  }

  async resetCalls(): Promise<void> {
    await this.call('POST', '/calls/reset');
  }

  async setFaults(rules: FaultRule[], seed?: number): Promise<void> {
    await this.call('PUT', '/faults', { rules, seed });
  }

  async clearFaults(): Promise<void> {
    await this.call('DELETE', '/faults');
  }

  /**
   * To the next lifecycle status, or to a named one. `unlisted: true` allows a name the
   * job-status lookup does not have (a status added after the client was written).
   */
  advanceJob(
    jobNumber: number,
    status?: string,
    opts: { unlisted?: boolean } = {},
  ): Promise<{ jobNumber: number; jobStatus: string }> {
    return this.call(
      'POST',
      `/jobs/${jobNumber}/advance`,
      status === undefined ? {} : { status, ...(opts.unlisted ? { unlisted: true } : {}) },
    );
  }

  /** Moves the sandbox clock forward (tokens, ship dates, job progress, promo expiry follow). */
  advanceClock(ms: number): Promise<{ now: string }> {
    return this.call('POST', '/clock/advance', { ms });
  }

  clock(): Promise<{ now: string }> {
    return this.call('GET', '/clock');
  }

  async expireTokens(): Promise<void> {
    await this.call('POST', '/tokens/expire');
  }
}
