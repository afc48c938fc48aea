import type { Settings } from '../core/config/resolve-settings.js';
import { awsCredentials } from '../core/config/aws-credentials.js';
import { UsageError } from '../core/errors.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import type { S3Store } from '../storage/s3/s3-store.js';
import { isS3Url, parseS3Url, type S3Location } from '../storage/s3/s3-url.js';

/** The store of a watched bucket, as the settings (s3Endpoint, s3Region, s3ForcePathStyle) and AWS_* say. */
export async function openBucketStore(
  s3: S3Location,
  settings: Pick<Settings, 'get'>,
  env: Record<string, string | undefined>,
): Promise<S3Store> {
  // The AWS SDK is loaded only for a bucket.
  const { S3Store } = await import('../storage/s3/s3-store.js');
  return new S3Store({
    bucket: s3.bucket,
    endpoint: settings.get('s3Endpoint'),
    forcePathStyle: settings.get('s3ForcePathStyle'),
    region: settings.get('s3Region'),
    credentials: awsCredentials(env),
  });
}

/** The ledger kept under a bucket watcher's state prefix (`bucketLedger`), shared by every instance that names it. */
export async function bucketLedgerOf(store: S3Store, statePrefix: string, leaseMs: number): Promise<LedgerStore> {
  const { BucketLedger } = await import('../storage/ledger/bucket-ledger.js');
  return new BucketLedger(store, `${statePrefix}ledger/`, { leaseMs });
}

const EXAMPLE = 's3://BUCKET/htorder-state/';

/**
 * Where a watcher of `drop` keeps its ledger and claims: the `bucketLedger` setting, which must
 * lie outside every prefix droppers write — the watched one and every other drop location the
 * config file's routes name (`others`) — in either direction (neither under the other). A
 * ledger droppers can write is a ledger they can forge: approvals, unsubmitted orders, a reset
 * daily spend. UsageError (exit 2) when it is missing or overlaps.
 */
export function bucketStateOf(
  value: string | undefined,
  drop: S3Location,
  others: readonly string[] = [],
  example = EXAMPLE.replace('BUCKET', drop.bucket),
): S3Location {
  const dropUrl = `s3://${drop.bucket}/${drop.prefix}`;
  if (value === undefined)
    throw new UsageError(
      `watching ${dropUrl} needs bucketLedger (--bucket-ledger, HTORDER_BUCKET_LEDGER or a profile): the bucket prefix where the watcher keeps its ledger and claims, which droppers must not be able to write, e.g. --bucket-ledger ${example} (docs/watch.md#where-a-bucket-watcher-keeps-its-ledger); or a ledger database every host shares, ledgerUrl (docs/fleet.md)`,
    );
  if (!isS3Url(value)) throw new UsageError(`bucketLedger: "${value}" is not an s3://BUCKET/PREFIX/ URL`);
  const state = parseS3Url(value);
  if ('error' in state) throw new UsageError(`bucketLedger: ${state.error}`);
  for (const where of [dropUrl, ...others]) {
    const other = parseS3Url(where);
    if ('error' in other || other.bucket !== state.bucket) continue;
    if (state.prefix.startsWith(other.prefix) || other.prefix.startsWith(state.prefix))
      throw new UsageError(
        `bucketLedger s3://${state.bucket}/${state.prefix} overlaps the drop location ${where}: whoever may drop files there could write the ledger (approve held jobs, unsubmit orders, reset the daily spend). Use a prefix outside every drop location, e.g. ${example}, writable by the watcher only (docs/watch.md#where-a-bucket-watcher-keeps-its-ledger)`,
      );
  }
  return state;
}
