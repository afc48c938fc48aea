import type { Dispatcher } from 'undici';
import type { World } from '../state.js';
import { enter, STATUS } from './lifecycle.js';

/**
 * The printer's part in a new print (spec, "New-print artwork"): after a job is created, it
 * fetches each line's `externalArtworkUrl` itself. A job whose links all answer with an image,
 * a PDF or a PostScript file leaves "Artwork Pending" for "Received"; a link that fails keeps it
 * waiting, as `track` then shows. Links are held only until fetched, in memory: the printer
 * keeps no copy of them, so a sandbox restarted in between leaves the job waiting.
 */

export interface PendingArtwork {
  customerId: number;
  jobNumber: number;
  links: string[];
}

const TIMEOUT_MS = 10_000;
/** Read at most this much of an answer: enough to know it is a file, not to keep it. */
const READ_BYTES = 1024 * 1024;
const ACCEPTED = /^(image\/[\w.+-]+|application\/(pdf|postscript|illustrator|vnd\.adobe\.illustrator))$/;

let printer: Dispatcher | undefined;

/** Whether the link answers 2xx with an artwork content type (following up to 3 redirects). */
export async function fetchArtwork(link: string): Promise<boolean> {
  // Loaded on the first new print with a link: the sandbox starts with the simulator alone.
  const { Agent, interceptors, request } = await import('undici');
  printer ??= new Agent({ headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS }).compose(
    interceptors.redirect({ maxRedirections: 3 }),
  );
  try {
    const res = await request(link, { method: 'GET', dispatcher: printer, signal: AbortSignal.timeout(TIMEOUT_MS) });
    let read = 0;
    for await (const chunk of res.body) {
      read += (chunk as Buffer).length;
      if (read >= READ_BYTES) break;
    }
    res.body.destroy();
    const type =
      String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim()
        .toLowerCase() ?? '';
    return res.statusCode >= 200 && res.statusCode < 300 && ACCEPTED.test(type);
  } catch {
    return false;
  }
}

/** What the fetches mean for the job: every link good → Received (if it still waits for artwork). */
export function applyArtwork(world: World, pending: PendingArtwork, fetched: readonly boolean[]): void {
  const job = world.customer(pending.customerId).jobs.get(pending.jobNumber);
  if (!job || job.status !== STATUS.ArtworkPending) return;
  if (fetched.every(Boolean)) {
    enter(job, STATUS.Received, world.clock.nowMs());
    world.dirty = true;
  }
}
