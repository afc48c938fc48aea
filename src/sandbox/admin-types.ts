/** Shapes of the admin (test-control) API, shared by the server and SandboxAdmin. */

export const FAULT_KINDS = ['latency', 'status', 'reset', 'create-then-drop', 'create-then-500'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  /** `"POST /Jobs"`, `"GET /Jobs/active"`, `"token"` (or `"POST token"`), `"*"` for every non-admin route. */
  route: string;
  kind: FaultKind;
  /** 0..1, default 1. Rolled with the fault seed, so a run repeats exactly. */
  probability?: number;
  /** For kind `status`: 429, 500, 502 or 503. */
  status?: 429 | 500 | 502 | 503;
  /** Sent as Retry-After on 429/503 (default 1). */
  retryAfterSeconds?: number;
  latencyMs?: number;
  jitterMs?: number;
  /** Fire at most N times, then the rule is spent. */
  times?: number;
  /**
   * For `POST /Jobs` only: fire on real creates (`create`) or on `validateOnly` dry runs
   * (`validate`); omitted = both. Lets a test aim "create, then drop" at the create itself.
   */
  when?: 'create' | 'validate';
}

export interface CreatedJobRecord {
  region: string;
  customerId: number;
  /** Which credential created it. */
  account: string;
  jobNumber: number;
  orderNumber: string | null;
  /** Current status (the clock is applied first). */
  jobStatus: string;
  /** The exact JSON body received, parsed. */
  request: unknown;
  /** The body as received, byte for byte (UTF-8). */
  rawBody: string;
  /** Headers of interest: x-application-name, content-type, user-agent, idempotency-key, x-request-id. */
  headers: Record<string, string>;
  receivedAt: string;
}
