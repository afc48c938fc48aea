import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import type pg from 'pg';
import { isLoopbackHost } from '../../core/config/url-security.js';
import { UsageError } from '../../core/errors.js';
import { REDACTED, rememberSecret } from '../../core/log/redact.js';

/**
 * The connection to the ledger's database from the `ledgerUrl` setting
 * (`postgres://USER@HOST:PORT/DATABASE?sslmode=…`, docs/fleet.md), as libpq reads one: what
 * the URL leaves out comes from the standard PG* variables (PGUSER, PGHOST, PGPORT, PGDATABASE,
 * PGSSLMODE, PGSSLROOTCERT), then libpq's defaults. The password is never in the URL (a URL
 * ends up on command lines, in config files and logs): it comes from `ledgerPasswordFile`,
 * PGPASSWORD, or the password file (PGPASSFILE, else ~/.pgpass), and is scrubbed from every
 * message as a configured secret.
 */

export interface PgConnectionInput {
  url: string;
  /** The password read from the ledgerPasswordFile setting's file. */
  password?: string;
  /** The CA certificates file (ledgerCaFile): the server's certificate must chain to one of them. */
  caFile?: string;
  /** Plain connections to another host than this one are refused unless allowed (allowInsecure). */
  allowInsecure: boolean;
  env: Record<string, string | undefined>;
  /** Only checked: no file read, no password looked up. */
  check?: boolean;
}

export interface PgConnection {
  config: pg.ClientConfig;
  /** For messages: `postgres://user@host:port/database`, never with a password. */
  name: string;
}

/** libpq's sslmode values htorder follows; `allow` and `prefer` (fall back to clear text) are refused. */
const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
type SslMode = (typeof SSL_MODES)[number];

/** The URL's query parameters htorder reads; any other is refused, so a typo cannot turn TLS off unseen. */
const PARAMETERS = new Set(['sslmode', 'sslrootcert', 'host', 'application_name']);

const EXAMPLE = 'postgres://htorder@db.example.com:5432/htorder';

/**
 * What can be said of `ledgerUrl` without reaching the database (its form, parameters, sslmode
 * and clear text to another host), as a command starts: a UsageError (exit 2) when wrong.
 */
export function checkLedgerUrl(url: string, allowInsecure: boolean, env: Record<string, string | undefined>): void {
  pgConnection({ url, allowInsecure, env, check: true });
}

export function pgConnection(input: PgConnectionInput): PgConnection {
  const url = parseUrl(input.url);
  const env = input.env;
  const unknown = [...url.searchParams.keys()].filter((k) => !PARAMETERS.has(k));
  if (unknown.length > 0)
    throw new UsageError(
      `ledgerUrl: unknown parameter ${unknown.join(', ')} (known: ${[...PARAMETERS].join(', ')}); e.g. ${EXAMPLE}?sslmode=verify-full`,
    );
  const host = url.searchParams.get('host') ?? (url.hostname.replace(/^\[|\]$/g, '') || env.PGHOST || 'localhost');
  const port = Number(url.port || env.PGPORT || 5432);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new UsageError(`ledgerUrl: no port ${port}`);
  const user = decode(url.username) || env.PGUSER || userInfo().username;
  const database = decode(url.pathname.replace(/^\//, '')) || env.PGDATABASE || user;
  const local = host.startsWith('/') || isLoopbackHost(host);
  const sslmode = sslModeOf(url.searchParams.get('sslmode') ?? env.PGSSLMODE, local);
  const where = host.startsWith('/') ? encodeURIComponent(host) : host.includes(':') ? `[${host}]` : host;
  const name = `postgres://${encodeURIComponent(user)}@${where}:${port}/${encodeURIComponent(database)}`;
  if (sslmode === 'disable' && !local && !input.allowInsecure)
    throw new UsageError(
      `ledgerUrl: sslmode=disable would send the ledger's password and orders to ${host} in clear; use sslmode=verify-full (or require), or allowInsecure for a test rig`,
    );
  const caFile = input.caFile ?? url.searchParams.get('sslrootcert') ?? env.PGSSLROOTCERT;
  if (input.check) return { config: {}, name };
  const password = input.password ?? env.PGPASSWORD;
  if (password !== undefined) rememberSecret(password, 'configured');
  const config: pg.ClientConfig = {
    host,
    port,
    user,
    database,
    // Looked up when a connection is made (the pgpass file is read then, as libpq does).
    password: password ?? (() => fromPassFile({ host, port, user, database })),
    ssl: tlsOf(sslmode, caFile, host),
    application_name: url.searchParams.get('application_name') ?? 'htorder',
  };
  return { config, name };
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`ledgerUrl: "${text.replace(/:[^:@/]*@/, `:${REDACTED}@`)}" is not a URL like ${EXAMPLE}`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new UsageError(`ledgerUrl: ${url.protocol}// is not a PostgreSQL URL; e.g. ${EXAMPLE}`);
  if (url.password !== '') {
    rememberSecret(decode(url.password), 'configured');
    url.password = REDACTED;
    throw new UsageError(
      `ledgerUrl ${url.href} holds a password: a URL ends up on command lines, in config files and logs. ` +
        'Put the password in a file only you can read and name it with ledgerPasswordFile (--ledger-password-file), ' +
        'or use PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass)',
    );
  }
  return url;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new UsageError(`ledgerUrl: "${text}" is not valid percent-encoding`);
  }
}

/** The sslmode given, else verify-full for another host and disable for this one (loopback, a socket). */
function sslModeOf(given: string | undefined, local: boolean): SslMode {
  if (given === undefined || given === '') return local ? 'disable' : 'verify-full';
  if ((SSL_MODES as readonly string[]).includes(given)) return given as SslMode;
  if (given === 'allow' || given === 'prefer')
    throw new UsageError(
      `ledgerUrl: sslmode=${given} falls back to clear text without a word; use verify-full, verify-ca or require (or disable on this host)`,
    );
  throw new UsageError(`ledgerUrl: sslmode=${given} is not one of ${SSL_MODES.join(', ')}`);
}

/**
 * node-postgres's TLS options for libpq's sslmode: `require` encrypts without checking whose
 * certificate it is unless a CA file is given (then as verify-ca, as libpq does), `verify-ca`
 * checks the chain, `verify-full` also the host name (against the system's CAs unless a CA file
 * is given).
 */
function tlsOf(mode: SslMode, caFile: string | undefined, host: string): pg.ClientConfig['ssl'] {
  if (mode === 'disable') return false;
  let ca: string | undefined;
  if (caFile !== undefined) {
    try {
      ca = readFileSync(caFile, 'utf8');
    } catch (err) {
      throw new UsageError(`ledgerCaFile: cannot read ${caFile}: ${(err as Error).message}`);
    }
  }
  const checkChainOnly = { checkServerIdentity: () => undefined };
  if (mode === 'require')
    return ca === undefined ? { rejectUnauthorized: false } : { ca, rejectUnauthorized: true, ...checkChainOnly };
  if (mode === 'verify-ca') return { ...(ca === undefined ? {} : { ca }), rejectUnauthorized: true, ...checkChainOnly };
  return { ...(ca === undefined ? {} : { ca }), rejectUnauthorized: true, servername: host };
}

/**
 * The password for this connection in the password file (PGPASSFILE, else ~/.pgpass), or none
 * (empty: a server that wants one then refuses the credentials, which says what is wrong).
 */
async function fromPassFile(info: { host: string; port: number; user: string; database: string }): Promise<string> {
  const { default: pgpass } = await import('pgpass');
  return new Promise((resolve) => {
    pgpass(info, (password) => {
      if (password !== undefined) rememberSecret(password, 'configured');
      resolve(password ?? '');
    });
  });
}
