import type { ManifestJob } from '../model.js';
import { eachItem, itemPath, type Finding } from './rule.js';

/**
 * externalArtworkUrl must be https (the service fetches it itself; plain http only on
 * loopback, for tests and the sandbox). Messages never echo the query string or userinfo:
 * a signed URL's signature is a credential. If one PriceCode line of a job has artwork,
 * the API expects all of them to.
 */
export function artworkUrls(job: ManifestJob, j: number): Finding[] {
  const findings = eachItem(job, (item, i) => {
    if (item.externalArtworkUrl === undefined) return [];
    const field = itemPath(j, i, 'externalArtworkUrl');
    const problem = urlProblem(item.externalArtworkUrl);
    return problem ? [{ code: problem.code, field, message: problem.message }] : [];
  });
  const priceCodeLines = (job.items ?? [])
    .map((item, i) => [item, i] as const)
    .filter(([item]) => item?.itemType === 'PriceCode');
  const withArt = priceCodeLines.filter(([item]) => item.externalArtworkUrl !== undefined);
  if (withArt.length > 0) {
    for (const [item, i] of priceCodeLines) {
      if (item.externalArtworkUrl !== undefined) continue;
      findings.push({
        code: 'artwork.missing',
        field: itemPath(j, i),
        message: `has no externalArtworkUrl but items[${withArt[0][1]}] of this job does; the API expects every PriceCode line to supply one when any does`,
      });
    }
  }
  return findings;
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
