/** `s3://BUCKET/PREFIX` → bucket and a prefix that is empty or ends in `/`. */
export interface S3Location {
  bucket: string;
  prefix: string;
}

export function isS3Url(target: string): boolean {
  return /^s3:\/\//i.test(target);
}

export function parseS3Url(target: string): S3Location | { error: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(target);
  if (!m) return { error: `"${target}" is not an s3://BUCKET/PREFIX URL` };
  const bucket = m[1];
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) return { error: `"${bucket}" is not a valid bucket name` };
  let prefix = m[2];
  if (prefix.split('/').some((seg, i, all) => seg === '..' || seg === '.' || (seg === '' && i < all.length - 1))) {
    return { error: `the prefix "${prefix}" must not contain empty, "." or ".." segments` };
  }
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  return { bucket, prefix };
}
