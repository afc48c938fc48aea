/**
 * A drop location: where `htorder watch` finds manifests (a folder or a bucket prefix) and
 * where it leaves them with their reports. Both back-ends share one layout: new inputs at
 * the top, claimed ones in `processing/`, finished ones in `done/` or `failed/`.
 */

import type { Stats } from 'node:fs';
import type { Settings } from '../../core/config/resolve-settings.js';
import type { FolderPin } from '../../storage/folder-file.js';
import type { ReportPaths } from '../../report/report-paths.js';
import type { ReportTarget } from '../../report/write-reports.js';
import { isSafeName } from './drop-names.js';

export interface ListedInput {
  /** A single path segment (see drop-names.ts), never a path. */
  name: string;
  size: number;
  mtimeMs: number;
  /** A `NAME.done` marker says the writer finished. */
  marked: boolean;
}

/** `held`: nothing failed, but jobs wait for approval (docs/guardrails.md); taken back once approved. */
export type FinishOutcome = 'done' | 'failed' | 'held';

/** Writes an input's reports once, to `target`; returns the paths of those it wrote (the ones that move). */
export type WriteReports = (target: ReportTarget) => Promise<Partial<ReportPaths>>;

/** The reports of an input, in the order they are put in place (the input moves after them). */
export const REPORT_KINDS = ['json', 'csv', 'errors'] as const satisfies readonly (keyof ReportPaths)[];

/**
 * The input is no longer what was read at claim (docs/watch.md#a-file-that-changes-while-it-is-processed):
 * a writer went on writing after a pause longer than the stable time, or a newer upload took its key.
 */
export interface InputChange {
  /** What changed, for people: `its size changed from 120 to 240 bytes`. */
  what: string;
  /** What becomes of it once given back (requeue): `will be processed again once stable`. */
  next: string;
}

/** A file moved to done/, failed/ or held/ as it was processed: watched for the settle window (folders). */
export interface Finished {
  outcome: FinishOutcome;
  /** Its name there, and where that is for people. */
  name: string;
  location: string;
  /** Its identity (a moved file keeps its inode) and the size and mtime of the bytes processed. */
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** How a finished file looks now (an lstat): what the settle window compares. */
export type FileLook = Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs' | 'isFile'>;

export interface ClaimedInput {
  name: string;
  /** A private local copy of the input, the only thing the pipeline reads; reports are written beside it. */
  path: string;
  /** Where the input is, for people (logs): a folder path or `s3://bucket/key`. */
  location: string;
  /** sha256 (hex) of the private copy's bytes, taken while copying; absent when `refused`. */
  sha256?: string;
  /**
   * A drop folder: the folder the input was dropped in, pinned, where its `artwork:` files are
   * read (never the private copy's), as files its dropper could read. Absent for a bucket.
   */
  artworkFolder?: FolderPin;
  /**
   * Why the input must not be read (a link or a FIFO swapped in, a hard link, over the size
   * cap), for its errors.txt: it is finished as failed without being processed.
   */
  refused?: string;
  /** Set by finish where a finished file can still change (a folder): what the settle window watches. */
  moved?: Finished;
  /**
   * Extends the claim's lease. False when another instance decided we were dead and took it
   * over (the caller must stop touching this input); true once this instance let go of it.
   */
  renew(): Promise<boolean>;
  /**
   * Moves the input to done/, failed/ or held/ (never over an earlier file of the same name)
   * with the reports `writeReports` wrote, then drops the claim. Returns the input's final
   * location; ClaimLostError when the claim was taken over.
   */
  finish(outcome: FinishOutcome, writeReports?: WriteReports): Promise<string>;
  /** Drops the claim but leaves the input in processing/, for this or another instance to resume. */
  release(): Promise<void>;
  /**
   * Drops what this instance keeps of an input whose claim was lost (its private copy), and
   * touches nothing in the drop location: the claim and the input are the taker's now.
   */
  forget(): Promise<void>;
  /**
   * How the input differs from what was read at claim, right before `when` (the first send, or
   * the move out); undefined while unchanged. A folder compares size, mtime and sha256 (no
   * link followed); a bucket compares ETags.
   */
  recheck(when: 'submit' | 'finish'): Promise<InputChange | undefined>;
  /**
   * Gives a changed input back, never over another file (a folder: to the top again; a bucket:
   * drops an upload a newer one replaced); the claim and the copy go. Returns where it is now;
   * throws ClaimLostError when the claim was taken over.
   */
  requeue(): Promise<string>;
}

export interface DropSource {
  /** For logs and the health endpoint: the folder, or `s3://bucket/prefix`. */
  readonly location: string;
  /**
   * True where a listed file may still be being written (folders): the watcher waits until it
   * is stable. Object stores show an object only once its upload completed.
   */
  readonly needsStability: boolean;
  /**
   * Creates the layout, checks the store and marks the location as this watcher's ledger's
   * (drop.ts); throws a SourceError if it cannot be used.
   */
  init(): Promise<void>;
  /** The candidate inputs at the top of the drop location, already filtered by name. Moves nothing. */
  list(): Promise<ListedInput[]>;
  /** Takes `name` for this instance; undefined when another instance has it or it is gone. */
  claim(name: string): Promise<ClaimedInput | undefined>;
  /**
   * Inputs left in processing/ whose claim is gone or expired (an instance crashed), now
   * claimed for this instance. Never returns an input a live instance holds, this one
   * included. DropTakenError once the location was marked for another ledger.
   */
  claimOrphans(): Promise<ClaimedInput[]>;
  /** The inputs in held/ (names, not their reports), for the watcher to take back once approved. */
  listHeld(): Promise<string[]>;
  /** sha256 (hex) of held input `name`'s bytes; undefined when it is gone or not a regular file. */
  heldHash(name: string): Promise<string | undefined>;
  /**
   * Moves held input `name` back to the top of the drop location (never over another file),
   * its reports in held/ removed: it is processed again, and the ledger sends only what was
   * approved. Returns where it is now, or undefined when it is gone.
   */
  takeBack(name: string): Promise<string | undefined>;
  /** How finished file `f` looks now, undefined when nothing is there; absent where finished files cannot change (a bucket). */
  lookFinished?(f: Finished): Promise<FileLook | undefined>;
  /** Gives finished `f` back to the top like takeBack, if it is still the file processed; where it is now. */
  giveBackFinished?(f: Finished): Promise<string | undefined>;
  close(): Promise<void>;
}

/** The drop location is unusable (missing, not a folder, bucket unreachable, no conditional writes). */
export class SourceError extends Error {
  override name = 'SourceError';
  constructor(
    message: string,
    /** `usage`: fix the command or configuration (exit 2); `unavailable`: retry later (exit 3). */
    readonly kind: 'usage' | 'unavailable',
  ) {
    super(message);
  }
}

/**
 * The drop location is marked as another ledger's (src/storage/ledger/ledger-mark.ts): watchers of one location
 * must share one ledger. Fatal for a running watcher, not a failed scan.
 */
export class DropTakenError extends SourceError {
  override name = 'DropTakenError';
  constructor(message: string) {
    super(message, 'usage');
  }
}

/**
 * The claim is no longer ours (our lease ran out during a stall and another instance took the
 * input over): that instance finishes it, so we must not move anything.
 */
export class ClaimLostError extends Error {
  override name = 'ClaimLostError';
}

/** Names of the sub-locations; configurable, each a single path segment. */
export interface DropLayout {
  processing: string;
  done: string;
  failed: string;
  /** Absent: `held` (the dashboard's layouts predate it). */
  held?: string;
}

export const DEFAULT_LAYOUT: Required<DropLayout> = {
  processing: 'processing',
  done: 'done',
  failed: 'failed',
  held: 'held',
};

/** The layout the settings name (processingDir, doneDir, failedDir, heldDir): watch's sources and the dashboard agree on it. */
export function dropLayout(settings: Pick<Settings, 'get'>): DropLayout {
  return {
    processing: settings.get('processingDir') ?? DEFAULT_LAYOUT.processing,
    done: settings.get('doneDir') ?? DEFAULT_LAYOUT.done,
    failed: settings.get('failedDir') ?? DEFAULT_LAYOUT.failed,
    held: settings.get('heldDir') ?? DEFAULT_LAYOUT.held,
  };
}

/** Throws a SourceError (usage) unless each sub-location of `layout` is a plain name (`what`: folder or prefix). */
export function assertLayout(layout: DropLayout, what: 'folder' | 'prefix'): void {
  for (const [k, name] of Object.entries(layout)) {
    if (!isSafeName(name)) throw new SourceError(`the ${k} ${what} name "${name}" must be a plain name`, 'usage');
  }
}
