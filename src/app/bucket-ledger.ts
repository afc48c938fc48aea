import type { Settings } from '../core/config/resolve-settings.js';
import { awsCredentials } from '../core/config/aws-credentials.js';
import type { LedgerStore } from '../storage/ledger/model.js';
import type { S3Store } from '../storage/s3/s3-store.js';
import type { S3Location } from '../storage/s3/s3-url.js';

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

/** The ledger a watcher of `prefix` keeps in its bucket (shared by every instance on the prefix). */
export async function bucketLedgerOf(store: S3Store, prefix: string, leaseMs: number): Promise<LedgerStore> {
  const [{ BucketLedger }, { stateRoot }] = await Promise.all([
    import('../storage/ledger/bucket-ledger.js'),
    import('../watch/sources/bucket-source.js'),
  ]);
  return new BucketLedger(store, `${stateRoot(prefix)}ledger/`, { leaseMs });
}
