import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import S3rver from 's3rver';
import { S3Store } from '../../src/storage/s3/s3-store.js';

/**
 * A real S3-protocol server in-process on loopback, for tests: s3rver (works on Node 20).
 * s3rver ignores conditional-write headers, so with `conditional: true` a small proxy sits
 * in front that implements exactly those — `If-None-Match: *` and `If-Match: etag` on PUT and
 * DELETE, serialised per key so that of two racing writers one gets 412 — and passes every
 * other request through untouched (signatures included: the Host header is kept).
 */

export interface TestS3 {
  /** Endpoint to give the SDK / `--s3-endpoint`: the proxy in front of s3rver. */
  endpoint: string;
  /** The same server without conditional writes (their headers passed on to s3rver, which ignores them). */
  rawEndpoint: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Env vars for a spawned htorder: endpoint, path style, credentials. */
  env: Record<string, string>;
  client: S3Client;
  /** Every request the proxy passed on or answered: method and path (no query). */
  requests: { method: string; path: string }[];
  /** Makes the object at `key` `ms` older by the server's clock (its LastModified), as one left long ago. */
  backdate(key: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** The longest key S3 takes, in bytes of UTF-8 (a longer one: 400 KeyTooLongError). */
const S3_MAX_KEY_BYTES = 1024;

export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startTestS3(opts: { conditional?: boolean; bucket?: string } = {}): Promise<TestS3> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const dir = await mkdtemp(join(tmpdir(), 'htorder-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
  const addr = (await server.run()) as AddressInfo;
  const rawEndpoint = `http://127.0.0.1:${addr.port}`;
  const bucket = opts.bucket ?? 'htorder-test';
  const raw = client(rawEndpoint);
  await raw.send(new CreateBucketCommand({ Bucket: bucket }));
  // Always behind the proxy (it serialises each object's requests); it honours conditional
  // headers only with `conditional`, otherwise it passes them on to s3rver, which ignores them.
  const proxy = await startConditionalProxy(addr.port, raw, opts.conditional === true, dir);
  // A store without conditional writes (s3rver ignores their headers), with S3's
  // read-after-write all the same: the proxy's turns, passing the headers on.
  const plain = opts.conditional === true ? await startConditionalProxy(addr.port, raw, false, dir) : proxy;
  const endpoint = proxy.endpoint;
  const requests = proxy.requests;
  const c = client(endpoint);
  return {
    endpoint,
    rawEndpoint: plain.endpoint,
    bucket,
    credentials: S3_CREDENTIALS,
    env: {
      HTORDER_S3_ENDPOINT: endpoint,
      HTORDER_S3_FORCE_PATH_STYLE: '1',
      AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    client: c,
    requests,
    async backdate(key, ms) {
      // s3rver keeps each object in a file `KEY._S3rver_object` and answers its file's mtime.
      const at = new Date(Date.now() - ms);
      await utimes(join(dir, bucket, `${key}._S3rver_object`), at, at);
    },
    async close() {
      c.destroy();
      raw.destroy();
      await proxy.close();
      if (plain !== proxy) await plain.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: S3_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

async function startConditionalProxy(
  port: number,
  raw: S3Client,
  honour: boolean,
  dir: string,
): Promise<{ endpoint: string; requests: { method: string; path: string }[]; close(): Promise<void> }> {
  const requests: { method: string; path: string }[] = [];
  const queues = new Map<string, Promise<void>>();
  const serialised = async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const before = queues.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chain = before.then(() => mine);
    queues.set(key, chain);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (queues.get(key) === chain) queues.delete(key);
    }
  };

  // Settles however the exchange ends, a client that went away mid-answer included (a watcher
  // killed with SIGKILL): its object's turn must end with it, or every later request on that
  // object waits forever (a pipe to a closed response stops, and its source never ends). The
  // request itself always completes upstream, as on S3: cut short, s3rver would keep a torn object.
  const forward = (req: IncomingMessage, res: ServerResponse, body?: Buffer): Promise<number | undefined> =>
    new Promise((resolve) => {
      const up = request(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
        (upRes) => {
          const done = (): void => resolve(upRes.statusCode);
          upRes.on('end', done);
          upRes.on('error', done);
          upRes.on('close', done);
          // The client gone (before or while answered): the answer is drained, not piped.
          const drain = (): void => {
            upRes.unpipe(res);
            upRes.resume();
          };
          if (res.destroyed) return drain();
          if (!res.headersSent) res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
          // After the pipe's own clean-up on close (which pauses the answer). An answer received
          // whole (`complete`) may still hold bytes the pipe never read: it ends only once they are.
          res.on('close', () => {
            if (!upRes.readableEnded) setImmediate(drain);
          });
        },
      );
      up.on('error', () => {
        if (!res.headersSent && !res.destroyed) res.writeHead(502).end();
        else res.destroy();
        resolve(undefined);
      });
      if (body) up.end(body);
      else {
        // A client gone before its request ended (a body-less GET cut off) never ends the pipe:
        // the request upstream is given up, or its answer never comes and the turn never ends.
        req.on('close', () => {
          if (!req.complete) up.destroy();
        });
        req.pipe(up);
      }
    });

  // Every request on one object takes that object's turn: s3rver's file-backed store races
  // when a PUT, GET and DELETE of one key overlap (it throws from a stream, uncaught), which
  // real S3 never does. Writes (PUT, DELETE, POST) of any key also take one turn for the whole
  // server: s3rver keeps keys as files in folders and a DELETE removes the folder its last
  // object leaves, so a PUT of another key under the same prefix could open its file in a
  // folder just removed (ENOENT, uncaught; seen under load with a bucket watcher's probe
  // object). Reads and bucket-level listings pass straight through.
  const WRITES = '\0writes';
  const writes = (req: IncomingMessage): boolean => req.method !== 'GET' && req.method !== 'HEAD';
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ method: req.method ?? '', path: url.pathname });
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    if (!bucket || !key) {
      // A bucket-level write (a multi-object delete) prunes folders too.
      if (writes(req)) void serialised(WRITES, () => forward(req, res));
      else void forward(req, res);
      return;
    }
    // As S3: a key over 1,024 bytes of UTF-8 is refused before anything else is looked at.
    if (Buffer.byteLength(key, 'utf8') > S3_MAX_KEY_BYTES) {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>KeyTooLongError</Code><Message>Your key is too long</Message></Error>',
      );
      return;
    }
    const ifNoneMatch = req.headers['if-none-match'];
    const ifMatch = req.headers['if-match'];
    const conditional =
      honour &&
      (req.method === 'PUT' || req.method === 'DELETE') &&
      (ifNoneMatch !== undefined || ifMatch !== undefined) &&
      !req.headers['x-amz-copy-source'];
    // Read the body before taking the key's turn, so a slow upload does not hold others up.
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void serialised(`${bucket}/${key}`, async () => {
        if (conditional) {
          const etag = await raw.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
            (h) => h.ETag,
            () => undefined,
          );
          const fails = (ifNoneMatch === '*' && etag !== undefined) || (ifMatch !== undefined && ifMatch !== etag);
          if (fails) {
            res.writeHead(412, { 'content-type': 'application/xml' });
            res.end(
              '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
            );
            return;
          }
        }
        const body = Buffer.concat(chunks);
        const status = await (writes(req)
          ? serialised(WRITES, () => forward(req, res, body))
          : forward(req, res, body));
        const upload = req.method === 'PUT' && !req.headers['x-amz-copy-source'] && !url.searchParams.has('partNumber');
        // An aws-chunked upload's body carries chunk signatures: the object's own length is in its header.
        const length = Number(req.headers['x-amz-decoded-content-length'] ?? body.length);
        if (upload && status !== undefined && status < 300) await whole(raw, bucket, key, length);
        const copy = req.method === 'PUT' && req.headers['x-amz-copy-source'] !== undefined;
        if (copy && status === 200) await setEtag(dir, bucket, key, await bytesMd5(dir, bucket, key));
        const completed = req.method === 'POST' && url.searchParams.has('uploadId');
        if (completed && status === 200) await setEtag(dir, bucket, key, multipartEtag(body.toString('utf8')));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port: proxyPort } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${proxyPort}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/**
 * S3's ETags where s3rver's differ: a multipart upload's is the MD5 of its parts' MD5s and
 * their count (`…-2`), not the MD5 of its bytes; and a copy (CopyObject) gets the MD5 of its
 * bytes, so a multipart upload's copy has an ETag of its own (as any SSE-KMS object's copy
 * has on S3), where s3rver keeps the source's.
 */
async function setEtag(dir: string, bucket: string, key: string, etag: string): Promise<void> {
  await writeFile(join(dir, bucket, `${key}._S3rver_object.md5`), etag);
}

async function bytesMd5(dir: string, bucket: string, key: string): Promise<string> {
  return createHash('md5')
    .update(await readFile(join(dir, bucket, `${key}._S3rver_object`)))
    .digest('hex');
}

/** The ETag S3 gives the upload a CompleteMultipartUpload body lists the parts of. */
function multipartEtag(complete: string): string {
  const parts = [...complete.matchAll(/<ETag>(?:"|&quot;)?([0-9a-f]{32})(?:"|&quot;)?<\/ETag>/g)].map((m) => m[1]);
  const md5 = createHash('md5')
    .update(Buffer.from(parts.join(''), 'hex'))
    .digest('hex');
  return `${md5}-${parts.length}`;
}

/**
 * Waits, within the object's turn, until its uploaded bytes can all be read back: s3rver
 * answers a PUT before its file is written (it ends the write stream and does not wait for it),
 * so a GET right after could read a short or empty object, which S3 (read-after-write) never
 * gives. The last byte readable means the whole object is (the file is written in order).
 */
async function whole(raw: S3Client, bucket: string, key: string, length: number): Promise<void> {
  if (length === 0) return;
  const range = `bytes=${length - 1}-${length - 1}`;
  for (let attempt = 0; attempt < 200; attempt++) {
    // An answer cut off mid-body (s3rver reading a file still being written) is a read that
    // failed, as a refused one is: it must not escape the turn, which nobody awaits.
    const read = await raw
      .send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: range }))
      .then((r) => r.Body?.transformToByteArray())
      .then(
        (bytes) => bytes?.length ?? 0,
        () => 0,
      );
    if (read === 1) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Our S3 store over the test server (through its conditional-write proxy), as watch and the ledger use it. */
export function storeOf(s3: TestS3): S3Store {
  return new S3Store({ bucket: s3.bucket, endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
}

/**
 * A test file's (or describe block's) S3 server with conditional writes and our store over it,
 * started before its tests and closed after them; the object is filled in by beforeAll.
 */
export function s3Fixture(): { s3: TestS3; store: S3Store } {
  const fx = {} as { s3: TestS3; store: S3Store };
  beforeAll(async () => {
    fx.s3 = await startTestS3({ conditional: true });
    fx.store = storeOf(fx.s3);
  });
  afterAll(async () => {
    fx.store?.close();
    await fx.s3?.close();
  });
  return fx;
}

/** An endpoint that passes on only the requests a dropper's policy allows, and what it refused. */
export interface DropperEndpoint {
  endpoint: string;
  /** Requests answered 403: method and key (or `?prefix=` of a listing). */
  denied: { method: string; key: string }[];
  close(): Promise<void>;
}

/**
 * A dropper's view of the test server: an endpoint in front of `s3` that passes on only what an
 * IAM policy granting `s3:GetObject`, `s3:PutObject`, `s3:DeleteObject` on `BUCKET/PREFIX*` and
 * `s3:ListBucket` with `s3:prefix` under PREFIX allows; every other request (another key, a
 * listing of another prefix, a multi-object delete) is answered 403 AccessDenied, as S3 would.
 */
export async function startDropperEndpoint(s3: TestS3, prefix: string): Promise<DropperEndpoint> {
  const up = new URL(s3.endpoint);
  const denied: DropperEndpoint['denied'] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    const listing = key === '' && req.method === 'GET' && !url.searchParams.has('delete');
    const asked = listing ? (url.searchParams.get('prefix') ?? '') : key;
    const allowed =
      bucket === s3.bucket && asked.startsWith(prefix) && (listing || key !== '') && req.method !== 'POST';
    if (!allowed) {
      denied.push({ method: req.method ?? '', key: asked });
      req.resume();
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
      );
      return;
    }
    const out = request(
      { host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    denied,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
