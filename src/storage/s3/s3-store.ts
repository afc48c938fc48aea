import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { STRAY_AFTER_MS } from '../stray-temporaries.js';

/**
 * The few object operations watch and the bucket ledger need, over one bucket, with S3's
 * answers turned into values: a missing object is `undefined`, a failed condition is
 * `'precondition-failed'`. Conditional writes (`If-None-Match: *`, `If-Match: etag`) are what
 * make claims and locks safe across machines; `conditional` is false only when the store was
 * found not to honour them and the user chose `--single-instance` (then the headers are not
 * even sent, since some stores reject requests that carry them).
 */

export interface S3StoreOptions {
  bucket: string;
  /** MinIO, R2, Ceph…; default: AWS from the standard configuration. */
  endpoint?: string;
  forcePathStyle?: boolean;
  region?: string;
  /** Tests and local servers; default: the SDK's standard credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** How long a connection may take, and a request's socket stay silent (default STORE_TIMEOUTS). */
  timeouts?: { connectMs: number; idleMs: number };
}

/**
 * The SDK waits for ever by default: one request a store (or a network) never answers would
 * hold its input's slot, and a watcher's stop, for good. A silent socket fails the request
 * instead (the input is retried); silence, not duration, so a big upload that flows never trips.
 */
export const STORE_TIMEOUTS = { connectMs: 10_000, idleMs: 60_000 };

export interface StoredObject {
  body: Buffer;
  etag: string;
  /** Its size when it is over the `maxBytes` asked for: then `body` is empty, nothing of it read. */
  tooBig?: number;
}

export interface ListedObject {
  key: string;
  size: number;
  lastModified: number;
  etag: string;
}

export type PutCondition = { ifNoneMatch: '*' } | { ifMatch: string };

export const PRECONDITION_FAILED = 'precondition-failed';

/** How a conditional-write probe's name starts: hidden, so never taken as an input under a drop prefix. */
const PROBE_START = '.htorder-probe-';
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** A probe's whole name (this build's), and that of the `probe-UUID` earlier builds wrote under the state prefix. */
const PROBES = { start: PROBE_START, name: new RegExp(`^\\.htorder-probe-${UUID}$`) };
const OLD_PROBES = { start: 'probe-', name: new RegExp(`^probe-${UUID}$`) };

/** Where stale probes are looked for: directly under `under`, names starting `start` and of the form `name`. */
interface StaleProbes {
  under: string;
  start: string;
  name: RegExp;
}

/** A logger that drops the SDK's messages (S3Client's `logger`). */
const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

export class S3Store {
  readonly bucket: string;
  readonly client: S3Client;
  conditional = true;

  constructor(opts: S3StoreOptions) {
    // The SDK warns on every start that future versions will want Node 22; on the Node 20
    // this package supports, that is noise in a daemon's log.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.bucket = opts.bucket;
    this.client = new S3Client({
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      forcePathStyle: opts.forcePathStyle === true,
      region: opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      // Only where the API requires it: S3-compatible stores often lack the newer CRC checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // The SDK's own log: by default its warnings (a failed streaming PUT: "An error was
      // encountered in a non-retryable streaming request.") go to the console, i.e. a daemon's
      // stderr. Each failure is thrown to htorder, which reports it with its object.
      logger: QUIET,
      requestHandler: {
        connectionTimeout: (opts.timeouts ?? STORE_TIMEOUTS).connectMs,
        socketTimeout: (opts.timeouts ?? STORE_TIMEOUTS).idleMs,
      },
    });
  }

  /** The object at `key`; one over `maxBytes` is not read (`tooBig`): a dropper's object may be of any size. */
  async get(key: string, maxBytes?: number): Promise<StoredObject | undefined> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!res.Body) throw new Error(`GET ${key}: the store answered without a body`);
      const size = res.ContentLength;
      if (maxBytes !== undefined && size !== undefined && size > maxBytes) {
        (res.Body as Readable).destroy();
        return { body: Buffer.alloc(0), etag: res.ETag ?? '', tooBig: size };
      }
      const body = Buffer.from(await res.Body.transformToByteArray());
      return { body, etag: res.ETag ?? '' };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Whether an object is at `key` (HEAD: nothing of it is read). */
  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** The new ETag, or 'precondition-failed' when the condition did not hold. */
  async put(
    key: string,
    body: string | Uint8Array | Readable,
    condition?: PutCondition,
    contentType?: string,
    contentLength?: number,
  ): Promise<string> {
    const cond =
      this.conditional && condition
        ? 'ifMatch' in condition
          ? { IfMatch: condition.ifMatch }
          : { IfNoneMatch: '*' }
        : {};
    try {
      const res = await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ...(contentType ? { ContentType: contentType } : {}),
          ...(contentLength !== undefined ? { ContentLength: contentLength } : {}),
          ...cond,
        }),
      );
      return res.ETag ?? '';
    } catch (err) {
      if (isPreconditionFailed(err)) return PRECONDITION_FAILED;
      // If-Match on an object that is gone: the condition failed too.
      if (condition && 'ifMatch' in condition && isNotFound(err)) return PRECONDITION_FAILED;
      throw err;
    }
  }

  /** False when the condition did not hold (someone else changed or removed the object). Deleting nothing is fine. */
  async delete(key: string, ifMatch?: string): Promise<boolean> {
    try {
      await this.client.send(
        new DeleteObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(this.conditional && ifMatch ? { IfMatch: ifMatch } : {}),
        }),
      );
      return true;
    } catch (err) {
      if (isPreconditionFailed(err)) return false;
      if (isNotFound(err)) return ifMatch === undefined;
      throw err;
    }
  }

  /** False when the source does not exist, or (`ifMatch`, where conditions are honoured) is no longer the object of that ETag. */
  async copy(fromKey: string, toKey: string, ifMatch?: string): Promise<boolean> {
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: toKey,
          CopySource: `${this.bucket}/${fromKey.split('/').map(encodeURIComponent).join('/')}`,
          ...(this.conditional && ifMatch ? { CopySourceIfMatch: ifMatch } : {}),
        }),
      );
      return true;
    } catch (err) {
      if (isNotFound(err) || (ifMatch && isPreconditionFailed(err))) return false;
      throw err;
    }
  }

  /**
   * Copies the object at `fromKey` as it is now, and returns the ETag it had; undefined when there
   * is none, or it was replaced before the copy (where conditions are honoured). A copy's own ETag
   * is not its source's when the source was a multipart upload or is encrypted with SSE-KMS.
   */
  async copyCurrent(fromKey: string, toKey: string): Promise<string | undefined> {
    const source = await this.head(fromKey);
    return source && (await this.copy(fromKey, toKey, source.etag)) ? source.etag : undefined;
  }

  /** The object at exactly `key` (a listing by prefix also shows longer keys), or undefined. */
  async head(key: string): Promise<ListedObject | undefined> {
    return (await this.list(key)).find((o) => o.key === key);
  }

  /** Objects under `prefix`; with `delimiter` only those directly under it (no "sub-folders"). */
  async list(prefix: string, delimiter?: string): Promise<ListedObject[]> {
    const out: ListedObject[] = [];
    let token: string | undefined;
    do {
      const res = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          ContinuationToken: token,
          ...(delimiter ? { Delimiter: delimiter } : {}),
        }),
      );
      for (const o of res.Contents ?? []) {
        if (o.Key)
          out.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified?.getTime() ?? 0, etag: o.ETag ?? '' });
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  /** Whether any object's key starts with `prefix` (one listing request). */
  async hasAny(prefix: string): Promise<boolean> {
    const res = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: 1 }));
    return (res.Contents ?? []).length > 0;
  }

  /**
   * Whether the store honours `If-None-Match: *`: the second create of one probe object, a
   * hidden `PREFIX.htorder-probe-UUID` (`prefix`: empty or ending in `/`), must be refused with
   * 412. Stores that ignore the header (older MinIO, s3rver) would let two instances claim one
   * file, so watch refuses to share them unless told `--single-instance`. The stale probes
   * under `prefix` and `alsoUnder` are removed on the way (removeStaleProbes), and under
   * `oldUnder` (a bucket ledger's prefix) the `probe-UUID` ones earlier builds left there.
   */
  async probeConditionalWrites(
    prefix: string,
    alsoUnder: readonly string[] = [],
    oldUnder: readonly string[] = [],
  ): Promise<{ ok: true } | { ok: false; why: string }> {
    const probeKey = `${prefix}${PROBE_START}${randomUUID()}`;
    const stale = [
      ...[prefix, ...alsoUnder].map((under) => ({ under, ...PROBES })),
      ...oldUnder.map((under) => ({ under, ...OLD_PROBES })),
    ];
    try {
      return await this.probeAt(probeKey);
    } finally {
      await this.removeStaleProbes(probeKey, stale).catch(() => undefined);
      await this.delete(probeKey).catch(() => undefined);
    }
  }

  private async probeAt(probeKey: string): Promise<{ ok: true } | { ok: false; why: string }> {
    const saved = this.conditional;
    this.conditional = true;
    try {
      const first = await this.put(probeKey, 'probe 1', { ifNoneMatch: '*' }).catch((err: unknown) => err);
      if (first === PRECONDITION_FAILED) {
        // A probe left by a crashed start-up: remove it and try once more.
        await this.delete(probeKey);
        return await this.probeAt(probeKey);
      }
      if (first instanceof Error) {
        // Refused credentials, a denied prefix or an unreachable store refuse a plain PUT too:
        // that is the store's failure (thrown), not a store without conditional writes.
        await this.put(probeKey, 'probe 1');
        return { ok: false, why: `a conditional PUT was rejected (${describe(first)})` };
      }
      const second = await this.put(probeKey, 'probe 2', { ifNoneMatch: '*' }).catch((err: unknown) => err);
      if (second instanceof Error) return { ok: false, why: `a conditional PUT was rejected (${describe(second)})` };
      if (second !== PRECONDITION_FAILED)
        return { ok: false, why: 'it overwrote an existing object despite If-None-Match: *' };
      return { ok: true };
    } finally {
      this.conditional = saved;
    }
  }

  /**
   * Removes the probes directly under each place's prefix that a start-up killed mid-probe
   * left, which nothing else would ever remove: names of that place's probe form only (never a
   * user's object), over STRAY_AFTER_MS older than the probe at `own` by the store's clock (a
   * probe lives for a few requests, so another instance's in flight is never one, whatever this
   * host's clock says).
   */
  private async removeStaleProbes(own: string, places: readonly StaleProbes[]): Promise<void> {
    const now = (await this.head(own))?.lastModified;
    if (now === undefined) return;
    const seen = new Set<string>();
    for (const { under, start, name } of places) {
      if (seen.has(under + start)) continue;
      seen.add(under + start);
      const listed = await this.list(`${under}${start}`, '/');
      for (const o of listed)
        if (name.test(o.key.slice(under.length)) && now - o.lastModified > STRAY_AFTER_MS) await this.delete(o.key);
    }
  }

  close(): void {
    this.client.destroy();
  }
}

function status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isNotFound(err: unknown): boolean {
  return (
    status(err) === 404 || (err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound'))
  );
}

function isPreconditionFailed(err: unknown): boolean {
  // 409 ConditionalRequestConflict: AWS's answer when a concurrent conditional write is in flight.
  return (
    status(err) === 412 ||
    (status(err) === 409 && (err as Error).name === 'ConditionalRequestConflict') ||
    (err as Error)?.name === 'PreconditionFailed'
  );
}

export function describe(err: unknown): string {
  const s = status(err);
  const name = (err as Error)?.name ?? 'Error';
  return s ? `${name}, HTTP ${s}` : `${name}: ${(err as Error)?.message ?? String(err)}`;
}
