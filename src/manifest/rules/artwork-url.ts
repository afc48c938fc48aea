import type { ManifestItem, ManifestJob } from '../model.js';
import { eachItem, itemPath, NOTHING, type Finding } from './rule.js';

/**
 * externalArtworkUrl must be https (the service fetches it itself; plain http only on
 * loopback, for tests and the sandbox). Messages never echo the query string or userinfo:
 * a signed URL's signature is a credential. If one PriceCode line of a job has artwork,
 * the API expects all of them to.
 */
export function artworkUrls(job: ManifestJob, j: number): Finding[] {
  const findings = eachItem(job, (item, i) => {
    if (item.artwork !== undefined) return artworkFile(item, j, i);
    if (item.externalArtworkUrl === undefined) return NOTHING;
    const field = itemPath(j, i, 'externalArtworkUrl');
    const problem = urlProblem(item.externalArtworkUrl);
    return problem ? [{ code: problem.code, field, message: problem.message }] : NOTHING;
  });
  const items: readonly (ManifestItem | undefined)[] = Array.isArray(job.items) ? job.items : [];
  const hasArt = (item: ManifestItem | undefined) =>
    item?.externalArtworkUrl !== undefined || item?.artwork !== undefined;
  const firstWithArt = items.findIndex((item) => item?.itemType === 'PriceCode' && hasArt(item));
  if (firstWithArt >= 0) {
    for (let i = 0; i < items.length; i++) {
      if (items[i]?.itemType !== 'PriceCode' || hasArt(items[i])) continue;
      findings.push({
        code: 'artwork.missing',
        field: itemPath(j, i),
        message: `has no artwork or externalArtworkUrl but items[${firstWithArt}] of this job does; the API expects every PriceCode line to supply one when any does`,
      });
    }
  }
  return findings;
}

/**
 * `artwork` names a file of the manifest's own folder tree: relative, no `..`; whether it is
 * really there (and not a link out) is checked when it is read.
 */
function artworkFile(item: ManifestItem, j: number, i: number): readonly Finding[] {
  const field = itemPath(j, i, 'artwork');
  if (item.externalArtworkUrl !== undefined)
    return [{ code: 'artwork.both', field, message: 'give artwork or externalArtworkUrl, not both' }];
  const name = String(item.artwork);
  if (name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name) || name.split(/[\\/]/).includes('..'))
    return [
      {
        code: 'artwork.outside',
        field,
        message: "must name a file inside the manifest's folder, relative to it (designs/tiger.png)",
      },
    ];
  return NOTHING;
}

export function urlProblem(value: unknown): { code: string; message: string } | undefined {
  if (typeof value !== 'string') return { code: 'url.invalid', message: 'must be a URL' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { code: 'url.invalid', message: 'is not a valid absolute URL (expected https://…)' };
  }
  const safe = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.username || url.password)
    return { code: 'url.credentials', message: `must not embed a user name or password (${safe})` };
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined;
  return { code: 'url.not-https', message: `must be an https URL the service can fetch, got ${safe}` };
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
