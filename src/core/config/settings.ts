/**
 * Every setting of htorder, once: how it is spelt on the command line, in the environment and
 * in a profile of the config file, its type, limits and default. The resolver
 * (resolve-settings.ts), the profile checker (config-file.ts), the command-line options
 * (config-flags.ts) and docs/configuration.md all follow this table; test/core/config checks that
 * the page lists exactly these settings.
 *
 * Command options that belong to one invocation rather than to an installation (`--json`,
 * `--mapping`, `--partial`, `--sandbox`, `--account`, `--data` …) are not settings: see
 * docs/commands.md.
 */

/** The type of a setting's value, and so its parser (parse-setting.ts). */
export type SettingType =
  | { kind: 'string' }
  | { kind: 'url' }
  | { kind: 'path' }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'milliseconds'; min: number; max: number }
  /** A length of time as people write it (`12h`, `7d`, `1d12h`, `0`), in milliseconds, from 0 to `max`. */
  | { kind: 'duration'; max: number }
  | { kind: 'amount'; max: number }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'port' }
  | { kind: 'host' }
  /** A signed length of time (`+3d`, `-12h`, `90m`, `0`), in milliseconds, at most a century either way (core/clock.ts parseOffset). */
  | { kind: 'offset' };

export interface Setting {
  /** Environment variable. */
  env: string;
  /** Command-line flag; absent: none. A boolean flag is a switch: `--x` means true, `--no-x` false. */
  flag?: string;
  /** Placeholder of the flag's value in help (`<name>`); absent: its type's (`<ms>`, `<url>` …), or none for a switch. */
  arg?: string;
  /** false: no profile of the config file can set it; else a profile can, under the setting's name. */
  profile?: false;
  type: SettingType;
  /** Built-in default; absent: none (required, or off). */
  default?: string | number | boolean;
  /** Must be set somewhere (the API account's coordinates). */
  required?: boolean;
  /** Never printed (only its name appears in a message) and never a flag, as command lines are visible to every user. */
  secret?: true;
  /** One line for `--help` and docs/configuration.md. */
  description: string;
}

/**
 * The one concurrency limit, with or without `--sandbox`: each request in flight holds a
 * connection (a file descriptor) and the client keeps up to two per request slot, so 256 keeps
 * a run inside the common limit of 1024 open files — also with the in-process sandbox, whose
 * server end of each connection is in the same process (docs/configuration.md#values).
 */
export const MAX_CONCURRENCY = 256;

/**
 * The most a YAML or JSON manifest may be set to (manifestMaxBytes): it is read whole and parsed
 * into a tree with a source location per value, several times its size in memory
 * (docs/manifests.md#big-files).
 */
export const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/** Timeouts and intervals longer than a day are a typo, not a wish. */
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const SETTINGS = {
  // Which profile, from which file.
  profile: {
    env: 'HTORDER_PROFILE',
    flag: '--profile',
    arg: '<name>',
    profile: false,
    type: { kind: 'string' },
    description: 'profile of the config file to use',
  },
  config: {
    env: 'HTORDER_CONFIG',
    flag: '--config',
    arg: '<file>',
    profile: false,
    type: { kind: 'path' },
    description:
      'config file with named profiles (default ./htorder.config.yaml if safe, then ~/.config/htorder/config.yaml)',
  },
  // The account: one region, one API key.
  baseUrl: {
    env: 'HTORDER_BASE_URL',
    flag: '--base-url',
    type: { kind: 'url' },
    required: true,
    description: "the region's API host",
  },
  authUrl: {
    env: 'HTORDER_AUTH_URL',
    flag: '--auth-url',
    type: { kind: 'url' },
    required: true,
    description: "the region's authentication host",
  },
  realm: {
    env: 'HTORDER_REALM',
    flag: '--realm',
    arg: '<realm>',
    type: { kind: 'string' },
    required: true,
    description: 'authentication realm',
  },
  clientId: {
    env: 'HTORDER_CLIENT_ID',
    flag: '--client-id',
    arg: '<id>',
    type: { kind: 'string' },
    required: true,
    description: 'API key id',
  },
  clientSecret: {
    env: 'HTORDER_CLIENT_SECRET',
    type: { kind: 'string' },
    secret: true,
    description: 'API secret (or clientSecretFile; not both)',
  },
  clientSecretFile: {
    env: 'HTORDER_CLIENT_SECRET_FILE',
    flag: '--client-secret-file',
    arg: '<file>',
    type: { kind: 'path' },
    description: 'file holding the API secret',
  },
  statusUrl: {
    env: 'HTORDER_STATUS_URL',
    flag: '--status-url',
    type: { kind: 'url' },
    description: "the region's status page host",
  },
  // The client.
  concurrency: {
    env: 'HTORDER_CONCURRENCY',
    flag: '--concurrency',
    type: { kind: 'integer', min: 1, max: MAX_CONCURRENCY },
    default: 8,
    description: 'API requests in flight at once',
  },
  appName: {
    env: 'HTORDER_APP_NAME',
    flag: '--app-name',
    arg: '<name>',
    type: { kind: 'string' },
    default: 'API',
    description: 'X-Application-Name header',
  },
  connectTimeoutMs: {
    env: 'HTORDER_CONNECT_TIMEOUT_MS',
    flag: '--connect-timeout-ms',
    type: { kind: 'milliseconds', min: 1, max: HOUR_MS },
    default: 10_000,
    description: 'connect timeout',
  },
  requestTimeoutMs: {
    env: 'HTORDER_REQUEST_TIMEOUT_MS',
    flag: '--request-timeout-ms',
    type: { kind: 'milliseconds', min: 1, max: HOUR_MS },
    default: 60_000,
    description: 'response timeout',
  },
  requestDeadlineMs: {
    env: 'HTORDER_REQUEST_DEADLINE_MS',
    type: { kind: 'milliseconds', min: 1, max: HOUR_MS },
    default: 300_000,
    description: 'whole API exchange, sending to the last byte of the answer',
  },
  maxResponseBytes: {
    env: 'HTORDER_MAX_RESPONSE_BYTES',
    type: { kind: 'integer', min: 1024, max: 2 ** 31 },
    default: 32 * 1024 * 1024,
    description: 'largest API answer read; a larger one is dropped unread',
  },
  allowInsecure: {
    env: 'HTORDER_ALLOW_INSECURE',
    flag: '--allow-insecure',
    type: { kind: 'boolean' },
    default: false,
    description: 'allow plain-http hosts other than loopback',
  },
  // The ledger.
  stateDir: {
    env: 'HTORDER_STATE_DIR',
    flag: '--state-dir',
    arg: '<dir>',
    type: { kind: 'path' },
    description: 'ledger directory (default $XDG_STATE_HOME/htorder or ~/.local/state/htorder)',
  },
  verifyNewOrders: {
    env: 'HTORDER_VERIFY_NEW_ORDERS',
    type: { kind: 'enum', values: ['auto', 'always'] },
    default: 'auto',
    description:
      'search the account for an order the ledger has never seen before its first create: auto (while the ledger cannot vouch for the account) or always',
  },
  artworkCheck: {
    env: 'HTORDER_ARTWORK_CHECK',
    flag: '--artwork-check',
    arg: '<on|warn|off>',
    type: { kind: 'enum', values: ['on', 'warn', 'off'] },
    default: 'on',
    description:
      'plan/run: fetch each artwork link once as the printer will (on: a link that fails refuses its line; warn: a warning; off: not fetched)',
  },
  artworkAllowPrivate: {
    env: 'HTORDER_ARTWORK_ALLOW_PRIVATE',
    flag: '--artwork-allow-private',
    type: { kind: 'boolean' },
    default: false,
    description:
      'allow artwork links on private, loopback or link-local addresses (a test rig whose printer shares the network)',
  },
  artworkStore: {
    env: 'HTORDER_ARTWORK_STORE',
    flag: '--artwork-store',
    arg: '<s3://bucket/prefix>',
    type: { kind: 'string' },
    description:
      'where `artwork:` files are uploaded for the printer to fetch (an S3-compatible bucket and prefix; s3Endpoint, s3Region and s3ForcePathStyle apply)',
  },
  artworkPublicBaseUrl: {
    env: 'HTORDER_ARTWORK_PUBLIC_BASE_URL',
    flag: '--artwork-public-base-url',
    type: { kind: 'url' },
    description:
      'the artwork store is public at this URL: links are BASE/KEY instead of presigned (which live at most 7 days)',
  },
  artworkLinkMarginDays: {
    env: 'HTORDER_ARTWORK_LINK_MARGIN_DAYS',
    flag: '--artwork-link-margin-days',
    type: { kind: 'integer', min: 0, max: 60 },
    default: 1,
    description: "a presigned artwork link lives until the start of the job's due date plus this many days",
  },
  artworkCheckBudgetMs: {
    env: 'HTORDER_ARTWORK_CHECK_BUDGET_MS',
    flag: '--artwork-check-budget-ms',
    type: { kind: 'milliseconds', min: 1000, max: HOUR_MS },
    default: 300_000,
    description: "the time one input's artwork link checks may take in all; links not checked by then fail their check",
  },
  artworkMaxInputBytes: {
    env: 'HTORDER_ARTWORK_MAX_INPUT_BYTES',
    flag: '--artwork-max-input-bytes',
    type: { kind: 'integer', min: 1_048_576, max: 1_099_511_627_776 },
    default: 2_147_483_648,
    description:
      'the bytes of distinct `artwork:` files one input may name in all (each file is read and hashed once per run)',
  },
  trustLocalConfig: {
    env: 'HTORDER_TRUST_LOCAL_CONFIG',
    profile: false,
    type: { kind: 'boolean' },
    default: false,
    description: "let ./htorder.config.yaml change the user's hosts, allowInsecure or secret file",
  },
  lockStaleMs: {
    env: 'HTORDER_LOCK_STALE_MS',
    flag: '--lock-stale-ms',
    type: { kind: 'milliseconds', min: 2000, max: DAY_MS },
    default: 10_000,
    description: "an order lock not refreshed this long is a killed process's and is taken over",
  },
  // The ledger in PostgreSQL, shared by a fleet of hosts (docs/fleet.md).
  ledgerUrl: {
    env: 'HTORDER_LEDGER_URL',
    flag: '--ledger-url',
    arg: '<postgres://user@host:port/db>',
    type: { kind: 'string' },
    description:
      'keep the ledger in this PostgreSQL database instead of the state dir, shared by every host that names it (no password in it)',
  },
  ledgerPasswordFile: {
    env: 'HTORDER_LEDGER_PASSWORD_FILE',
    flag: '--ledger-password-file',
    arg: '<file>',
    type: { kind: 'path' },
    description: "file holding the ledger database's password (else PGPASSWORD, PGPASSFILE or ~/.pgpass)",
  },
  ledgerCaFile: {
    env: 'HTORDER_LEDGER_CA_FILE',
    flag: '--ledger-ca-file',
    arg: '<file>',
    type: { kind: 'path' },
    description:
      "CA certificates the ledger database's TLS certificate must chain to (else PGSSLROOTCERT, the system's)",
  },
  ledgerWaitMs: {
    env: 'HTORDER_LEDGER_WAIT_MS',
    flag: '--ledger-wait-ms',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 60_000,
    description: 'how long a run waits for an unreachable ledger database before giving up (exit 3; watch retries)',
  },
  ledgerRetention: {
    env: 'HTORDER_LEDGER_RETENTION',
    flag: '--ledger-retention',
    arg: '<duration>',
    type: { kind: 'duration', max: 3660 * DAY_MS },
    default: '90d',
    description:
      "how long a folder ledger keeps each order's whole entry; older orders are folded into a compact index kept for ever (0: never fold)",
  },
  // Rehearsals and tests (docs/configuration.md#rehearsals-and-tests).
  clockOffset: {
    env: 'HTORDER_CLOCK_OFFSET',
    type: { kind: 'offset' },
    default: '0',
    description:
      "moves htorder's calendar clock (duplicate window, daily budget, saved plans' age, report and ledger times) by this much, e.g. +3d: a rehearsal of a later night",
  },
  // Logging.
  logLevel: {
    env: 'HTORDER_LOG_LEVEL',
    flag: '--log-level',
    arg: '<level>',
    type: { kind: 'enum', values: LOG_LEVELS },
    default: 'warn',
    description: 'fatal, error, warn, info, debug, trace or silent',
  },
  // watch: S3 buckets.
  s3Endpoint: {
    env: 'HTORDER_S3_ENDPOINT',
    flag: '--s3-endpoint',
    type: { kind: 'url' },
    description: 'S3-compatible endpoint, e.g. MinIO, R2, Ceph',
  },
  s3Region: {
    env: 'HTORDER_S3_REGION',
    flag: '--s3-region',
    arg: '<region>',
    type: { kind: 'string' },
    description: 'bucket region; else AWS_REGION',
  },
  s3ForcePathStyle: {
    env: 'HTORDER_S3_FORCE_PATH_STYLE',
    flag: '--s3-force-path-style',
    type: { kind: 'boolean' },
    default: false,
    description: 'path-style bucket addressing',
  },
  bucketLedger: {
    env: 'HTORDER_BUCKET_LEDGER',
    flag: '--bucket-ledger',
    arg: '<s3://bucket/prefix/>',
    type: { kind: 'string' },
    description:
      'where a bucket watcher keeps its ledger and claims: a prefix droppers cannot write, outside every watched prefix (required to watch a bucket, unless ledgerUrl is set; approve reads it)',
  },
  singleInstance: {
    env: 'HTORDER_SINGLE_INSTANCE',
    flag: '--single-instance',
    type: { kind: 'boolean' },
    default: false,
    description: 'allow a store without conditional writes; then run exactly ONE watcher on the prefix',
  },
  // watch: health endpoint.
  healthPort: {
    env: 'HTORDER_HEALTH_PORT',
    flag: '--health-port',
    type: { kind: 'port' },
    description: 'serve /healthz and Prometheus /metrics on this port (0: any free port)',
  },
  healthHost: {
    env: 'HTORDER_HEALTH_HOST',
    flag: '--health-host',
    type: { kind: 'host' },
    default: '127.0.0.1',
    description: 'address for --health-port (0.0.0.0 in containers)',
  },
  // The dashboard (htorder ui, watch --ui; docs/ui.md).
  uiPort: {
    env: 'HTORDER_UI_PORT',
    flag: '--ui-port',
    type: { kind: 'port' },
    description: 'port of the dashboard (htorder ui, watch --ui); default any free port',
  },
  uiHost: {
    env: 'HTORDER_UI_HOST',
    flag: '--ui-host',
    type: { kind: 'host' },
    default: '127.0.0.1',
    description: 'address of the dashboard; any but loopback needs uiToken',
  },
  uiToken: {
    env: 'HTORDER_UI_TOKEN',
    type: { kind: 'string' },
    secret: true,
    description:
      'token the dashboard asks for (basic-auth password or bearer token); required to bind other than loopback',
  },
  // watch: the drop location.
  scanIntervalMs: {
    env: 'HTORDER_SCAN_INTERVAL_MS',
    flag: '--scan-interval',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 2000,
    description: 'how often the drop location is scanned',
  },
  stableTimeMs: {
    env: 'HTORDER_STABLE_TIME_MS',
    flag: '--stable-time',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 2000,
    description: 'a file unchanged this long is complete (folders only)',
  },
  settleWindowMs: {
    env: 'HTORDER_SETTLE_WINDOW_MS',
    flag: '--settle-window',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 600_000,
    description:
      'a file moved to done/ or failed/ is watched this long; if it changes, it is processed again (folders only; 0: off)',
  },
  watchParallelFiles: {
    env: 'HTORDER_WATCH_PARALLEL_FILES',
    flag: '--parallel-files',
    type: { kind: 'integer', min: 1, max: MAX_CONCURRENCY },
    // Unset: twice `concurrency` (watch-daemon.ts), so one-order files keep every request slot busy.
    description: 'inputs worked on at once (default twice --concurrency); they share the one budget of API requests',
  },
  leaseMs: {
    env: 'HTORDER_LEASE_MS',
    flag: '--lease',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 30_000,
    description: "claims and bucket locks not renewed this long are a crashed instance's",
  },
  retryMinMs: {
    env: 'HTORDER_RETRY_MIN_MS',
    flag: '--retry-min',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 5000,
    description: 'first retry step when the API is unavailable (doubles up to --retry-max, jittered)',
  },
  retryMaxMs: {
    env: 'HTORDER_RETRY_MAX_MS',
    flag: '--retry-max',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 300_000,
    description: 'longest retry delay',
  },
  processingDir: {
    env: 'HTORDER_PROCESSING_DIR',
    flag: '--processing-dir',
    arg: '<name>',
    type: { kind: 'string' },
    default: 'processing',
    description: 'name of the claimed-inputs folder/prefix',
  },
  doneDir: {
    env: 'HTORDER_DONE_DIR',
    flag: '--done-dir',
    arg: '<name>',
    type: { kind: 'string' },
    default: 'done',
    description: 'name of the finished-inputs folder/prefix',
  },
  failedDir: {
    env: 'HTORDER_FAILED_DIR',
    flag: '--failed-dir',
    arg: '<name>',
    type: { kind: 'string' },
    default: 'failed',
    description: 'name of the failed-inputs folder/prefix',
  },
  csvMaxColumns: {
    env: 'HTORDER_CSV_MAX_COLUMNS',
    type: { kind: 'integer', min: 1, max: 1_000_000 },
    default: 1000,
    description:
      'most cells one CSV record (header or row) or .xlsx row may have; more is a located error and reading stops',
  },
  csvMaxRecordBytes: {
    env: 'HTORDER_CSV_MAX_RECORD_BYTES',
    type: { kind: 'integer', min: 1024, max: 2 ** 30 },
    default: 1024 * 1024,
    description:
      'largest CSV record in bytes, delimiters and quotes included (an .xlsx row: the text of its cells); a longer one is a located error',
  },
  csvMaxFileBytes: {
    env: 'HTORDER_CSV_MAX_FILE_BYTES',
    type: { kind: 'integer', min: 1024, max: 2 ** 40 },
    default: 1024 * 1024 * 1024,
    description: 'largest CSV file; a larger one is refused before it is parsed',
  },
  manifestMaxBytes: {
    env: 'HTORDER_MANIFEST_MAX_BYTES',
    type: { kind: 'integer', min: 1024, max: MAX_MANIFEST_BYTES },
    default: 10 * 1024 * 1024,
    description: 'largest YAML or JSON manifest; a larger one is refused before it is parsed',
  },
  watchMaxInputBytes: {
    env: 'HTORDER_WATCH_MAX_INPUT_BYTES',
    type: { kind: 'integer', min: 1, max: 2 ** 40 },
    default: 1024 * 1024 * 1024,
    description:
      'largest file or object watch takes from a drop folder or bucket; a larger one is set aside to failed/ unread',
  },
  watchMaxInputAttempts: {
    env: 'HTORDER_WATCH_MAX_INPUT_ATTEMPTS',
    type: { kind: 'integer', min: 1, max: 100 },
    default: 3,
    description: 'an input whose processing a crash interrupted this often is set aside to failed/',
  },
  fsEvents: {
    env: 'HTORDER_FS_EVENTS',
    flag: '--no-fs-events',
    type: { kind: 'boolean' },
    default: true,
    description: 'wake the scan early on file-system events (folders); the scan alone is always enough',
  },
  // track: the files written for the shop to import (docs/track.md#tracking-back-to-the-shop).
  trackingSendReceipt: {
    env: 'HTORDER_TRACKING_SEND_RECEIPT',
    type: { kind: 'boolean' },
    default: true,
    description:
      'track: the Shopify (Matrixify) tracking file has Shopify email each customer their tracking (Fulfillment: Send Receipt); false: no email',
  },
  // Notifications (watch, run): webhooks told of failures (docs/notifications.md).
  notifyUrl: {
    env: 'HTORDER_NOTIFY_URL',
    type: { kind: 'string' },
    secret: true,
    description: 'webhook URL(s) told of failures, separated by spaces (https; http only on loopback)',
  },
  notifyFormat: {
    env: 'HTORDER_NOTIFY_FORMAT',
    flag: '--notify-format',
    arg: '<format>',
    type: { kind: 'enum', values: ['auto', 'slack', 'teams', 'json'] },
    default: 'auto',
    description: "webhook payload: slack, teams, json, or auto (from the URL's host)",
  },
  notifyOn: {
    env: 'HTORDER_NOTIFY_ON',
    flag: '--notify-on',
    arg: '<events>',
    type: { kind: 'string' },
    default: 'failed,in-doubt,api-unavailable,api-recovered,awaiting-approval',
    description:
      'events that notify, comma-separated: failed, in-doubt, api-unavailable, api-recovered, done, awaiting-approval',
  },
  notifyApiUnavailableMs: {
    env: 'HTORDER_NOTIFY_API_UNAVAILABLE_MS',
    flag: '--notify-api-unavailable',
    type: { kind: 'milliseconds', min: 0, max: DAY_MS },
    default: 600_000,
    description: 'notify api-unavailable once the API has been unavailable this long',
  },
  // Guardrails (docs/guardrails.md): a job over a limit waits for approval instead of being sent.
  maxJobCost: {
    env: 'HTORDER_MAX_JOB_COST',
    flag: '--max-job-cost',
    type: { kind: 'amount', max: 1e12 },
    description:
      "largest estimate of one job, in the account's currency; a job over it waits for approval (off when unset)",
  },
  maxInputCost: {
    env: 'HTORDER_MAX_INPUT_COST',
    flag: '--max-input-cost',
    type: { kind: 'amount', max: 1e12 },
    description: "largest estimate of one input's jobs together; over it, they wait for approval (off when unset)",
  },
  maxDailyCost: {
    env: 'HTORDER_MAX_DAILY_COST',
    flag: '--max-daily-cost',
    type: { kind: 'amount', max: 1e12 },
    description:
      'most spent per account per day (UTC), counted in the ledger across runs, watchers and processes; a job beyond it waits for approval (off when unset)',
  },
  maxLineQuantity: {
    env: 'HTORDER_MAX_LINE_QUANTITY',
    flag: '--max-line-quantity',
    type: { kind: 'integer', min: 1, max: 1_000_000_000 },
    description: 'largest quantity of one line; a job with a larger one waits for approval (off when unset)',
  },
  duplicateWindow: {
    env: 'HTORDER_DUPLICATE_WINDOW',
    flag: '--duplicate-window',
    arg: '<duration>',
    type: { kind: 'duration', max: 366 * DAY_MS },
    default: '12h',
    description:
      'a new order with the same address and items as one sent from another input this long before, under another order number, waits for approval (12h: the same night; 0: off)',
  },
  heldDir: {
    env: 'HTORDER_HELD_DIR',
    flag: '--held-dir',
    arg: '<name>',
    type: { kind: 'string' },
    default: 'held',
    description: 'name of the folder/prefix for inputs whose jobs wait for approval',
  },
  notifyDigestAt: {
    env: 'HTORDER_NOTIFY_DIGEST_AT',
    flag: '--notify-digest-at',
    arg: '<HH:MM>',
    type: { kind: 'string' },
    description: "watch: send a digest of the day's counts every day at this local time",
  },
  defaultDeliveryMethod: {
    env: 'HTORDER_DEFAULT_DELIVERY_METHOD',
    type: { kind: 'string' },
    description:
      "shop exports: the delivery option of orders the export gives no shipping method (a mapping's own constant wins)",
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/** `watch`'s defaults where they differ from the table: a daemon's log is its record. */
export const WATCH_DEFAULTS: { [K in SettingName]?: string | number | boolean } = { logLevel: 'info' };

interface KindValue {
  string: string;
  url: string;
  path: string;
  integer: number;
  milliseconds: number;
  duration: number;
  amount: number;
  boolean: boolean;
  enum: string;
  port: number;
  host: string;
  offset: number;
}

/** The parsed value of a setting. */
export type SettingValue<K extends SettingName> = KindValue[(typeof SETTINGS)[K]['type']['kind']];

/** The settings the table gives a default, which therefore always have a value. */
export type DefaultedSetting = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { default: string | number | boolean } ? K : never;
}[SettingName];

/** A setting's row, with the optional fields of every row (the table's own type narrows each one). */
export function setting(name: SettingName): Setting {
  return SETTINGS[name];
}

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** The profile keys, in table order. */
export const PROFILE_SETTINGS: readonly SettingName[] = SETTING_NAMES.filter((n) => setting(n).profile !== false);

/**
 * The attribute commander stores a flag's value under: `--scan-interval` → `scanInterval`,
 * `--no-fs-events` → `fsEvents`.
 */
export function flagAttribute(flag: string): string {
  return flag.replace(/^--(no-)?/, '').replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
