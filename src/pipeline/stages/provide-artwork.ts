import { nowDate } from '../../core/clock.js';
import type { Diagnostic } from '../../manifest/model.js';
import { diagnostic } from '../../resolve/preflight/diagnostic.js';
import type { ArtworkFile, ArtworkStore } from '../../storage/artwork-store.js';
import { FolderFileError } from '../../storage/folder-file.js';
import { fullResolution, withFindings, type JobState } from '../job-state.js';
import type { InputArtworkFiles } from './artwork-files.js';
import type { StageContext } from './context.js';

const DAY_MS = 86_400_000;

/**
 * Lines that name an artwork file (`artwork: designs/tiger.png`) get the link the printer
 * fetches it from: `run` uploads the file to the artwork store first (once per content: the
 * key is its SHA-256), `plan` only says what it would upload. Runs after resolve (the due date
 * is known then, and the link must outlive it) and before the dry run, which sees the link.
 */
export async function provideArtwork(job: JobState, ctx: StageContext): Promise<JobState> {
  if (job.outcome !== 'ready') return job;
  const items = ctx.manifest.jobs.at(job.index)?.items ?? [];
  const named = items.flatMap((item, i) => (typeof item?.artwork === 'string' ? [{ name: item.artwork, i }] : []));
  if (named.length === 0) return job;
  const { sources } = ctx.manifest;
  const field = (i: number) => `jobs[${job.index}].items[${i}].artwork`;
  const store = ctx.artworkStore;
  const files = ctx.artworkFiles;
  if (!store || !files) {
    const message = 'names a file, but no artwork store is set (setting artworkStore: s3://bucket/prefix)';
    const found = named.map(({ i }) => diagnostic(sources, 'error', 'artwork.no-store', field(i), message));
    return { ...withFindings(job, found), outcome: 'refused' };
  }
  const now = nowDate(ctx.clock);
  const whole = fullResolution(job);
  const due = whole.candidate.dateDue ?? now.toISOString().slice(0, 10);
  const until = new Date(Date.parse(`${due}T00:00:00Z`) + ctx.artworkMarginDays * DAY_MS);
  const found: Diagnostic[] = [];
  const lines = [...whole.candidate.items];
  const keys: Record<number, string> = {};
  for (const { name, i } of named) {
    const result = await oneFile({ store, files, mode: ctx.mode, until, now }, name);
    if ('error' in result) found.push(diagnostic(sources, 'error', result.code, field(i), result.error));
    else {
      lines[i] = { ...lines[i], externalArtworkUrl: result.url } as (typeof lines)[number];
      keys[i] = result.key;
      if (result.note) found.push(diagnostic(sources, 'warning', 'artwork.upload', field(i), result.note));
      ctx.logger.info(
        { file: ctx.manifest.file, artwork: name, key: result.key, uploaded: result.uploaded },
        'artwork',
      );
    }
  }
  const next = withFindings(job, found);
  if (found.some((d) => d.severity === 'error')) return { ...next, outcome: 'refused' };
  const resolved = { ...whole, candidate: { ...whole.candidate, items: lines }, artworkKeys: keys };
  return { ...next, outcome: 'ready', resolved };
}

type FileResult = { url: string; key: string; uploaded: boolean; note?: string } | { error: string; code: string };

interface FileWork {
  store: ArtworkStore;
  files: InputArtworkFiles;
  mode: 'plan' | 'run';
  until: Date;
  now: Date;
}

async function oneFile({ store, files, mode, until, now }: FileWork, name: string): Promise<FileResult> {
  let file: ArtworkFile;
  try {
    file = await store.describe(await files.folder(), name, files.admit);
  } catch (err) {
    if (err instanceof FolderFileError) return { code: 'artwork.file', error: `${name} ${err.message}` };
    throw err;
  }
  const link = await store.link(file, until, now);
  if ('error' in link) return { code: 'artwork.lifetime', error: link.error };
  if (mode === 'plan') {
    const note = `run uploads ${name} (${file.size} bytes, ${file.contentType}) to ${store.location} as ${file.key.split('/').pop()}, unless it is there already`;
    return { url: link.url, key: file.key, uploaded: false, note };
  }
  try {
    const folder = await files.folder();
    return {
      url: link.url,
      key: file.key,
      uploaded: await files.uploadOnce(file.key, () => store.upload(folder, file)),
    };
  } catch (err) {
    if (err instanceof FolderFileError) return { code: 'artwork.file', error: `${name} ${err.message}` };
    throw err;
  }
}
