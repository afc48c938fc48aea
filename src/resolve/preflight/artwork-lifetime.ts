import { signedExpiry } from '../../core/signed-url.js';
import type { Severity } from '../../manifest/model.js';

/**
 * Whether a signed artwork link lives long enough. The printer fetches the artwork itself, at
 * any time until the job reaches production, which is at the latest its due date: a link that
 * has expired, or expires before the due date, leaves the job waiting for artwork. A job with
 * no `dateDue` is due on the account's earliest ship date, which is not known here: only an
 * expired link, or one expiring within a day, is reported then.
 */
export interface LifetimeFinding {
  severity: Severity;
  code: string;
  message: string;
}

const DAY_MS = 86_400_000;

export function artworkLifetime(link: string, dateDue: string | undefined, now: Date): LifetimeFinding | undefined {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return undefined;
  }
  const signed = signedExpiry(url);
  if (signed === undefined) return undefined;
  const { expires } = signed;
  if (expires === undefined)
    return {
      severity: 'warning',
      code: 'artwork.expiry-unknown',
      message: `looks like a signed link (${signed.scheme}) whose expiry cannot be read: make sure it outlives production`,
    };
  const at = stamp(expires);
  if (expires.getTime() <= now.getTime())
    return { severity: 'error', code: 'artwork.expired', message: `is a signed link that expired at ${at}` };
  const due = dueStart(dateDue);
  if (due !== undefined && expires.getTime() < due.getTime())
    return {
      severity: 'error',
      code: 'artwork.expires-early',
      message:
        `is a signed link that expires at ${at}, before the job's due date ${dateDue}: the printer fetches ` +
        `artwork until the job reaches production, so sign it to last until at least ${dateDue} ` +
        '(or use a public link)',
    };
  if (due === undefined && expires.getTime() - now.getTime() < DAY_MS)
    return {
      severity: 'warning',
      code: 'artwork.expires-soon',
      message: `is a signed link that expires at ${at}, within a day; the job has no dateDue, so the printer may fetch it later than that`,
    };
  return undefined;
}

/** The due date's first moment (UTC); undefined for no date or one not written YYYY-MM-DD. */
function dueStart(dateDue: string | undefined): Date | undefined {
  if (dateDue === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(dateDue)) return undefined;
  const date = new Date(`${dateDue}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function stamp(date: Date): string {
  return `${date.toISOString().slice(0, 16)}Z`;
}
