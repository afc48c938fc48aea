import { isAbsolute, join } from 'node:path';

/**
 * Everything needed to talk to one account of the API. Built by resolveConfig (env, profile
 * file, flags) or sandboxConfig (an in-process sandbox); consumed by createApiClient.
 */
export interface ApiConfig {
  /** The region's API host, e.g. `https://api.us.example.com`. No trailing slash. */
  baseUrl: string;
  /** The region's authentication host; the token endpoint is `{authUrl}/realms/{realm}/protocol/openid-connect/token`. */
  authUrl: string;
  realm: string;
  clientId: string;
  /** Never logged, never printed. */
  clientSecret: string;
  /** The region's status page host (`{statusUrl}/status.json`); optional, only `status.*` needs it. */
  statusUrl: string | null;
  /** Ledger location (absolute). Default per user: `$XDG_STATE_HOME/htorder` or `~/.local/state/htorder`. */
  stateDir: string;
  /** How many requests may be in flight to the API at once (the pipeline works on more jobs than that, so local disk work overlaps). Default 8. */
  concurrency: number;
  /** `X-Application-Name` header; the API validates it as an origin code. Default `API`. */
  appName: string;
  timeouts: Timeouts;
  /** Largest answer body read (setting maxResponseBytes); default in src/api/http.ts. */
  maxResponseBytes?: number;
  /** Plain-http hosts other than loopback are refused unless this is set. */
  allowInsecure: boolean;
  /** Profile name the values came from, if any (for messages only). */
  profile: string | null;
  /**
   * The ledger's key for the account when configuration fixes it: the in-process sandbox's
   * `sandbox/<account>` (ledger/account-key.ts). Absent: region and account id, learnt from the API.
   */
  ledgerAccount?: string;
}

export interface Timeouts {
  /** TCP + TLS connect. */
  connectMs: number;
  /** From the request being sent to the response headers arriving. */
  headersMs: number;
  /** Maximum idle time between body chunks. */
  bodyMs: number;
  /** The whole exchange, sending to last body byte (setting requestDeadlineMs); default in src/api/http.ts. */
  deadlineMs?: number;
}

/**
 * The per-user state directory: `$XDG_STATE_HOME/htorder` (when it is an absolute path, as the
 * XDG spec requires), else `~/.local/state/htorder`. One ledger per user and account, wherever
 * htorder runs from (docs/security.md#state-and-ledgers-one-ledger-per-account-wherever-htorder-runs).
 */
export function defaultStateDir(env: Record<string, string | undefined>, home: string): string {
  const xdg = env.XDG_STATE_HOME?.trim();
  return xdg && isAbsolute(xdg) ? join(xdg, 'htorder') : join(home, '.local', 'state', 'htorder');
}
