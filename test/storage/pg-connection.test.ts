import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scrubSecrets } from '../../src/core/log/redact.js';
import { openLedger } from '../../src/app/ledger-store.js';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import { checkLedgerUrl, pgConnection } from '../../src/storage/pg/pg-connection.js';
import { tempDir } from '../support/temp-files.js';

const base = { allowInsecure: false, env: {} };

describe('the ledger database from ledgerUrl', () => {
  it('reads user, host, port and database from the URL, the rest from PG* variables', () => {
    const c = pgConnection({ ...base, url: 'postgres://htorder@db.example.com:6543/ledger' });
    expect(c.config).toMatchObject({ host: 'db.example.com', port: 6543, user: 'htorder', database: 'ledger' });
    expect(c.name).toBe('postgres://htorder@db.example.com:6543/ledger');
    const d = pgConnection({
      ...base,
      url: 'postgresql:///',
      env: { PGHOST: '127.0.0.1', PGPORT: '5433', PGUSER: 'ops', PGDATABASE: 'orders', PGPASSWORD: 'from-the-env-123' },
    });
    expect(d.config).toMatchObject({ host: '127.0.0.1', port: 5433, user: 'ops', database: 'orders', ssl: false });
    expect(d.config.password).toBe('from-the-env-123');
  });

  it('refuses a URL holding a password, and never repeats it', () => {
    let message = '';
    try {
      pgConnection({ ...base, url: 'postgres://htorder:Very-Secret-42@db.example.com/ledger' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/holds a password.*ledgerPasswordFile.*PGPASSWORD/s);
    expect(message).not.toContain('Very-Secret-42');
    // Remembered as a secret: wherever it might turn up, it is scrubbed.
    expect(scrubSecrets('connecting with Very-Secret-42')).not.toContain('Very-Secret-42');
  });

  it('takes the password file over PGPASSWORD, and scrubs it from any message', () => {
    const c = pgConnection({
      ...base,
      url: 'postgres://u@127.0.0.1/db',
      password: 'file-password-987',
      env: { PGPASSWORD: 'env-password-654' },
    });
    expect(c.config.password).toBe('file-password-987');
    expect(scrubSecrets('auth failed for file-password-987')).not.toContain('file-password-987');
  });

  it('reads a password file (PGPASSFILE) when no password is given', async () => {
    const dir = await tempDir();
    const file = join(dir.path, 'pgpass');
    writeFileSync(file, '127.0.0.1:5432:db:u:pass-from-pgpass-321\n', { mode: 0o600 });
    const saved = process.env.PGPASSFILE;
    process.env.PGPASSFILE = file;
    try {
      const c = pgConnection({ ...base, url: 'postgres://u@127.0.0.1:5432/db' });
      expect(typeof c.config.password).toBe('function');
      expect(await (c.config.password as () => Promise<string>)()).toBe('pass-from-pgpass-321');
    } finally {
      if (saved === undefined) delete process.env.PGPASSFILE;
      else process.env.PGPASSFILE = saved;
      await dir.remove();
    }
  });

  it('verifies TLS fully by default for another host, and sends in clear only on this one', () => {
    expect(pgConnection({ ...base, url: 'postgres://u@db.example.com/db' }).config.ssl).toMatchObject({
      rejectUnauthorized: true,
      servername: 'db.example.com',
    });
    expect(pgConnection({ ...base, url: 'postgres://u@localhost/db' }).config.ssl).toBe(false);
    expect(pgConnection({ ...base, url: 'postgres://u@db.example.com/db?sslmode=require' }).config.ssl).toEqual({
      rejectUnauthorized: false,
    });
    expect(() => pgConnection({ ...base, url: 'postgres://u@db.example.com/db?sslmode=disable' })).toThrow(
      /in clear.*allowInsecure/,
    );
    expect(
      pgConnection({ ...base, allowInsecure: true, url: 'postgres://u@db.example.com/db?sslmode=disable' }).config.ssl,
    ).toBe(false);
    expect(() => pgConnection({ ...base, url: 'postgres://u@db.example.com/db?sslmode=prefer' })).toThrow(
      /falls back to clear text/,
    );
    expect(() => pgConnection({ ...base, url: 'postgres://u@db.example.com/db', env: { PGSSLMODE: 'allow' } })).toThrow(
      /falls back to clear text/,
    );
  });

  it('checks the certificate against a CA file, and reads it', async () => {
    const dir = await tempDir();
    const ca = join(dir.path, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    try {
      const full = pgConnection({ ...base, url: 'postgres://u@db.example.com/db', caFile: ca }).config.ssl;
      expect(full).toMatchObject({ rejectUnauthorized: true, ca: expect.stringContaining('BEGIN CERTIFICATE') });
      const chain = pgConnection({ ...base, url: 'postgres://u@db.example.com/db?sslmode=verify-ca', caFile: ca })
        .config.ssl as { checkServerIdentity?: () => undefined };
      expect(chain.checkServerIdentity?.()).toBeUndefined();
      expect(() =>
        pgConnection({ ...base, url: 'postgres://u@db.example.com/db', caFile: join(dir.path, 'missing.pem') }),
      ).toThrow(/ledgerCaFile: cannot read/);
    } finally {
      await dir.remove();
    }
  });

  it('refuses what it does not read: another scheme, an unknown parameter', () => {
    expect(() => pgConnection({ ...base, url: 'mysql://u@db/x' })).toThrow(/not a PostgreSQL URL/);
    expect(() => pgConnection({ ...base, url: 'postgres://u@db.example.com/db?sslmod=disable' })).toThrow(
      /unknown parameter sslmod/,
    );
    expect(() => pgConnection({ ...base, url: 'not a url' })).toThrow(/is not a URL/);
  });

  it('is checked at start without reading a file or looking a password up', () => {
    expect(() => checkLedgerUrl('postgres://u@db.example.com/db?sslrootcert=/no/such/ca.pem', false, {})).not.toThrow();
    expect(() => checkLedgerUrl('postgres://u@db.example.com/db?sslmode=disable', false, {})).toThrow(/in clear/);
    expect(() => checkLedgerUrl('postgres://u@db.example.com/db?sslmode=disable', true, {})).not.toThrow();
    expect(() => checkLedgerUrl('postgres://u:Pw-Secret-77@db.example.com/db', false, {})).toThrow(/holds a password/);
  });

  it('is set aside under --sandbox, said, for the state dir ledger', async () => {
    const dir = await tempDir();
    const warnings: string[] = [];
    try {
      const values: Record<string, unknown> = { ledgerUrl: 'postgres://u@db.example.com/db' };
      const opened = await openLedger(
        {
          config: { stateDir: dir.path },
          settings: {
            get: ((name: string) => values[name]) as never,
            raw: ((name: string) => (name in values ? { source: 'ledgerUrl of profile "shop"' } : undefined)) as never,
          },
          logger: { warn: (m: string) => warnings.push(m) } as never,
        },
        { staleMs: 10_000, env: {}, sandbox: true },
      );
      expect(opened.ledger).toBeInstanceOf(FolderLedger);
      expect(opened.where).toBe(dir.path);
      expect(warnings.join('\n')).toMatch(/--sandbox: ledgerUrl \(ledgerUrl of profile "shop"\) set aside/);
    } finally {
      await dir.remove();
    }
  });
});
