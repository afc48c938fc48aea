import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { BucketLeases } from '../../src/storage/bucket-lease.js';
import { FolderLeases } from '../../src/storage/folder-lease.js';
import { parseLease } from '../../src/storage/lease.js';
import { PgDatabase } from '../../src/storage/pg/pg-database.js';
import { PgLeases } from '../../src/storage/pg/pg-lease.js';
import { type LeaseSubject, leaseContract } from '../support/lease-contract.js';
import { pgClusterForFile } from '../support/pg-cluster.js';
import { s3Fixture } from '../support/s3.js';
import { tempDir } from '../support/temp-files.js';

/**
 * Every LeaseStore of htorder against the one lease contract (test/support/lease-contract.ts):
 * one line each. What only one implementation does (a folder's token and links, a bucket's
 * renewals one at a time) is tested beside it in lease.test.ts.
 */

const opened: FolderLeases[] = [];
const dirs: Awaited<ReturnType<typeof tempDir>>[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) s.close();
  for (const d of dirs.splice(0)) await d.remove();
});

let n = 0;
/** Leases in a folder, made with hard links or (refuseLinks, as on some SMB shares) exclusively. */
async function folderSubject(refuseLinks: boolean): Promise<LeaseSubject> {
  const dir = await tempDir('htorder-lease-');
  dirs.push(dir);
  const refuse = (): void => {
    throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' });
  };
  return {
    store(leaseMs, rule = {}, now) {
      const s = new FolderLeases({
        owner: `owner-${n++}`,
        leaseMs,
        ...rule,
        ...(now ? { now } : {}),
        ...(refuseLinks ? { link: refuse } : {}),
      });
      opened.push(s);
      return s;
    },
    name: () => join(dir.path, `.lease-${n++}.claim`),
    read: async (name) => {
      try {
        return readFileSync(name, 'utf8');
      } catch {
        return undefined;
      }
    },
    plant: async (name, text) => {
      try {
        unlinkSync(name);
      } catch {
        // Not there yet.
      }
      writeFileSync(name, text);
    },
  };
}

const s3 = s3Fixture();
/** Leases in a bucket: the in-process S3 server with conditional writes. */
function bucketSubject(): LeaseSubject {
  return {
    store: (leaseMs, rule, now) => new BucketLeases(s3.store, leaseMs, rule, now),
    name: () => `leases/${process.pid}-${n++}.claim`,
    read: async (key) => (await s3.store.get(key))?.body.toString('utf8'),
    plant: async (key, text) => {
      await s3.store.put(key, text);
    },
  };
}

leaseContract('a folder', () => folderSubject(false));
leaseContract('a folder without hard links', () => folderSubject(true));
leaseContract('a bucket', bucketSubject);

const cluster = await pgClusterForFile();
let db: PgDatabase | undefined;
afterAll(() => db?.close());
/** Leases as rows of the ledger database, judged by its clock (`now` shifts the store's view of it). */
async function databaseSubject(): Promise<LeaseSubject> {
  if (!db) {
    const url = new URL((await cluster?.createDatabase()) ?? '');
    db = new PgDatabase({
      connection: cluster!.connection(url.href),
      name: url.href,
      waitMs: 5000,
    });
  }
  const rows = db;
  return {
    store: (leaseMs, rule = {}, now) => new PgLeases(rows, { leaseMs, ...rule, ...(now ? { now } : {}) }),
    name: () => `leases/${process.pid}-${n++}.claim`,
    read: async (name) => {
      const r = (
        await rows.query<{ owner: string; host: string; pid: number; until: Date }>(
          'SELECT owner, host, pid, until FROM htorder.leases WHERE name = $1',
          [name],
        )
      ).rows[0];
      return r && `${JSON.stringify({ owner: r.owner, host: r.host, pid: r.pid, until: r.until.toISOString() })}\n`;
    },
    plant: async (name, text) => {
      const r = parseLease(text);
      await rows.query(
        `INSERT INTO htorder.leases (name, owner, host, pid, until) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, host = EXCLUDED.host, pid = EXCLUDED.pid, until = EXCLUDED.until`,
        [name, r?.owner, r?.host, r?.pid, r?.until],
      );
    },
  };
}

leaseContract('a PostgreSQL database', databaseSubject, cluster ? {} : { skip: 'no PostgreSQL server here' });
