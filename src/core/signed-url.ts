/**
 * When a signed link stops working, read from its own query string: AWS SigV4 (S3 and
 * anything S3-compatible), AWS SigV2, Google Cloud Storage V4, an Azure SAS and a CloudFront
 * canned policy. The printer fetches artwork itself, possibly days after the order, so a link
 * that dies before then leaves the job waiting for artwork. Only the expiry is read; the
 * signature is a credential and is never looked at or shown.
 */

export interface SignedExpiry {
  /** Which signing scheme the link uses. */
  scheme: 'aws-sigv4' | 'aws-sigv2' | 'gcs' | 'azure-sas' | 'cloudfront';
  /** When the link stops working; undefined when the scheme is seen but its dates cannot be read. */
  expires?: Date;
}

/** The link's expiry, or undefined for a link that is not signed by a scheme known here. */
export function signedExpiry(url: URL): SignedExpiry | undefined {
  const q = url.searchParams;
  const get = (name: string): string | null => q.get(name) ?? q.get(name.toLowerCase());
  if (get('X-Amz-Signature') !== null || get('X-Amz-Expires') !== null)
    return { scheme: 'aws-sigv4', expires: after(compactDate(get('X-Amz-Date')), get('X-Amz-Expires')) };
  if (get('X-Goog-Signature') !== null || get('X-Goog-Expires') !== null)
    return { scheme: 'gcs', expires: after(compactDate(get('X-Goog-Date')), get('X-Goog-Expires')) };
  if (q.get('sig') !== null && q.get('se') !== null) return { scheme: 'azure-sas', expires: isoDate(q.get('se')) };
  if (q.get('Key-Pair-Id') !== null) return { scheme: 'cloudfront', expires: epoch(q.get('Expires')) };
  if (q.get('AWSAccessKeyId') !== null && q.get('Expires') !== null)
    return { scheme: 'aws-sigv2', expires: epoch(q.get('Expires')) };
  return undefined;
}

/** `20261127T101500Z`, the basic ISO 8601 form SigV4 and GCS V4 sign with. */
function compactDate(text: string | null): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? '');
  if (!m) return undefined;
  return valid(new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`));
}

function after(start: Date | undefined, seconds: string | null): Date | undefined {
  if (start === undefined || seconds === null || !/^\d{1,10}$/.test(seconds)) return undefined;
  return valid(new Date(start.getTime() + Number(seconds) * 1000));
}

/** Seconds since 1970, as SigV2 and CloudFront write them. */
function epoch(text: string | null): Date | undefined {
  if (text === null || !/^\d{1,12}$/.test(text)) return undefined;
  return valid(new Date(Number(text) * 1000));
}

/** An Azure SAS `se`: an ISO 8601 date or date-time in UTC. */
function isoDate(text: string | null): Date | undefined {
  if (text === null || !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?Z)?$/.test(text)) return undefined;
  return valid(new Date(text));
}

function valid(date: Date): Date | undefined {
  return Number.isNaN(date.getTime()) ? undefined : date;
}
