import { describe, expect, it } from 'vitest';
import { signedExpiry } from '../../src/core/signed-url.js';
import { artworkLifetime } from '../../src/resolve/preflight/artwork-lifetime.js';

const at = (url: string) => signedExpiry(new URL(url));

describe('signedExpiry', () => {
  it('reads each scheme’s expiry', () => {
    expect(
      at('https://b.s3.amazonaws.com/a.png?X-Amz-Date=20261127T100000Z&X-Amz-Expires=3600&X-Amz-Signature=x'),
    ).toEqual({
      scheme: 'aws-sigv4',
      expires: new Date('2026-11-27T11:00:00Z'),
    });
    expect(at('https://b.s3.amazonaws.com/a.png?AWSAccessKeyId=K&Expires=1796000000&Signature=x')).toEqual({
      scheme: 'aws-sigv2',
      expires: new Date(1796000000 * 1000),
    });
    expect(
      at(
        'https://storage.googleapis.com/b/a.png?X-Goog-Date=20261127T100000Z&X-Goog-Expires=604800&X-Goog-Signature=x',
      ),
    ).toEqual({
      scheme: 'gcs',
      expires: new Date('2026-12-04T10:00:00Z'),
    });
    expect(
      at('https://a.blob.core.windows.net/c/a.png?sv=2022-11-02&se=2026-12-01T00%3A00%3A00Z&sr=b&sp=r&sig=x'),
    ).toEqual({
      scheme: 'azure-sas',
      expires: new Date('2026-12-01T00:00:00Z'),
    });
    expect(at('https://d1.cloudfront.net/a.png?Expires=1796000000&Signature=x&Key-Pair-Id=K')).toEqual({
      scheme: 'cloudfront',
      expires: new Date(1796000000 * 1000),
    });
    expect(at('https://cdn.example.com/a.png?v=3')).toBeUndefined();
    expect(at('https://b.s3.amazonaws.com/a.png?X-Amz-Date=garbage&X-Amz-Signature=x')).toEqual({
      scheme: 'aws-sigv4',
    });
  });
});

describe('artworkLifetime', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const sigv4 = (date: string, seconds: number) =>
    `https://b.s3.amazonaws.com/a.png?X-Amz-Date=${date}&X-Amz-Expires=${seconds}&X-Amz-Signature=SECRET`;

  it('refuses an expired link and one that dies before the due date, naming the date it needs and never the signature', () => {
    expect(artworkLifetime(sigv4('20261120T000000Z', 3600), undefined, now)).toMatchObject({
      severity: 'error',
      code: 'artwork.expired',
      message: 'is a signed link that expired at 2026-11-20T01:00Z',
    });
    const early = artworkLifetime(sigv4('20261127T000000Z', 604800), '2026-12-10', now);
    expect(early).toMatchObject({ severity: 'error', code: 'artwork.expires-early' });
    expect(early?.message).toContain("expires at 2026-12-04T00:00Z, before the job's due date 2026-12-10");
    expect(early?.message).not.toContain('SECRET');
    expect(artworkLifetime(sigv4('20261127T000000Z', 604800), '2026-12-03', now)).toBeUndefined();
  });

  it('with no due date, warns only of a link dying within a day; an unsigned link has no lifetime to check', () => {
    expect(artworkLifetime(sigv4('20261127T000000Z', 86400), undefined, now)).toMatchObject({
      code: 'artwork.expires-soon',
    });
    expect(artworkLifetime(sigv4('20261127T000000Z', 604800), undefined, now)).toBeUndefined();
    expect(artworkLifetime('https://cdn.example.com/a.png', '2030-01-01', now)).toBeUndefined();
  });
});
