import { createHash } from 'node:crypto';
import { lstat, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type ReportPaths, reportPaths } from '../../report/report-paths.js';
import { writeFileAtomic } from '../../storage/atomic-write.js';
import { freshTemporaries, removeStraysOf } from '../../storage/stray-temporaries.js';
import { FolderLeases, type LinkFile } from '../../storage/folder-lease.js';
import { type FolderPin, pinFolder } from '../../storage/folder-file.js';
import { HeldFolder, type Identity } from '../../storage/held-folder.js';
import { newOwnerId } from '../../storage/lease.js';
import {
  Drop,
  type DropOptions,
  firstFree,
  type NewSlot,
  type Occupant,
  type Staged,
  type Taken,
  type Where,
} from './drop.js';
import {
  DONE_MARKER_SUFFIX,
  MAX_INPUT_NAME_BYTES,
  classifyName,
  isOwnTemporary,
  longNameErrors,
  markedInput,
  nameBytes,
  reportNames,
  shortName,
} from './drop-names.js';
import {
  changeOf,
  copyVerified,
  hashHeld,
  missingSticky,
  occupied,
  readSmallFile,
  removeFile,
  removeStaleMarker,
  reportFileOptions,
  moveNoClobber,
  sweepOld,
  unlinkQuiet,
  type Verified,
  writeFileExclusive,
} from '../../storage/drop-files.js';
import { LEDGER_MARK } from '../../storage/ledger/ledger-mark.js';
import {
  REPORT_KINDS,
  SourceError,
  type ClaimedInput,
  type DropLayout,
  type FileLook,
  type Finished,
  type FinishOutcome,
  type InputChange,
  type ListedInput,
} from './model.js';
import { StickyRefusals } from '../../storage/sticky-claims.js';

export interface FolderSourceOptions extends DropOptions {
  /** A claim not renewed for this long belongs to a dead instance. Default 30 s. */
  leaseMs?: number;
  /** How claims are linked to the lease token (fs.linkSync); tests pass one that refuses, as some SMB shares do. */
  linkFile?: LinkFile;
}

/** The sub-folders made and held from init. */
const SUB_FOLDERS = ['processing', 'done', 'failed', 'held'] as const satisfies readonly (keyof DropLayout)[];

/** What a folder keeps of a claim: what was copied (undefined when refused unread). */
interface FolderClaim {
  verified?: Verified;
}

/** An entry to give back to the top: acted on through its held folder, checked to be `expected`. */
interface Entry {
  path: string;
  expected?: Identity;
}

/**
 * A drop folder (`htorder watch DIR`) as a store of the drop protocol (drop.ts), safe for several
 * instances, also on NFS/SMB. A claim is the folder lease `processing/.NAME.claim`
 * (folder-lease.ts), then a rename of `NAME` into `processing/`; every move goes through the
 * sub-folders held open since init (held-folder.ts), and is checked by device and inode. Links
 * are never followed, and the pipeline reads only a private copy made through one O_NOFOLLOW
 * handle (src/storage/drop-files.ts; docs/security.md#drop-folders-links-swaps-and-odd-names).
 */
export class FolderSource extends Drop<FolderClaim, Entry> {
  readonly location: string;
  readonly needsStability = true;
  private readonly claims: FolderLeases;
  private readonly sticky: StickyRefusals;
  /** The sub-folders, held open from init: every file is created and moved through them. */
  private readonly held: Partial<Record<keyof DropLayout, HeldFolder>> = {};
  /** The drop folder itself, pinned at init: where dropped manifests' `artwork:` files are read. */
  private top: FolderPin | undefined;

  constructor(
    dir: string,
    private readonly opts: FolderSourceOptions = {},
  ) {
    const link = opts.linkFile ? { link: opts.linkFile } : {};
    const claims = new FolderLeases({ owner: newOwnerId(), leaseMs: opts.leaseMs ?? 30_000, ...link });
    super(claims, opts);
    this.claims = claims;
    this.location = resolve(dir);
    this.sticky = new StickyRefusals(this.location, (name, why) => opts.onRefused?.(name, why));
  }

  protected where(which: Where, name = ''): string {
    return which === 'top' ? join(this.location, name) : join(this.location, this.layout[which], name);
  }

  /** The path to act on `name` in sub-folder `which` through its held folder, never through its name. */
  private in(which: keyof DropLayout, name = ''): string {
    const held = this.held[which];
    if (!held) throw new Error('the drop source was not initialised (init() opens its folders)');
    return held.at(name);
  }

  /**
   * Throws unless the name of sub-folder `which` still leads to the folder held since init: one
   * who may write the drop folder could rename it or swap it with a link. Checked before and
   * after each move into it.
   */
  private async assertHeld(which: keyof DropLayout): Promise<void> {
    if (await this.held[which]?.intact()) return;
    throw new SourceError(
      `the ${which} folder ${this.where(which)} was replaced (renamed, or swapped with a link) while watched; ` +
        'refusing to move files through it (make the drop folder sticky: chmod +t)',
      'usage',
    );
  }

  protected async open(): Promise<void> {
    const info = await stat(this.location).catch(() => undefined);
    if (!info) throw new SourceError(`the drop folder ${this.location} does not exist`, 'usage');
    if (!info.isDirectory()) throw new SourceError(`${this.location} is not a folder`, 'usage');
    const unsafe = missingSticky(this.location, info);
    if (unsafe) throw new SourceError(unsafe, 'usage');
    this.top = pinFolder(this.location);
    for (const k of SUB_FOLDERS) {
      const held = await HeldFolder.make(this.where(k));
      if (typeof held === 'string') throw new SourceError(`the ${k} folder ${this.where(k)} ${held}`, 'usage');
      await this.held[k]?.close();
      this.held[k] = held;
      await this.assertHeld(k);
      // Temporaries of instances killed mid-write: each lives for ms, so one untouched this long is no live one's.
      await sweepOld(this.in(k), isOwnTemporary, Date.now() - Math.max(10 * 60_000, 4 * this.leases.leaseMs));
    }
    this.claims.sweep(this.in('processing'));
  }

  async list(): Promise<ListedInput[]> {
    const entries = await readdir(this.location, { withFileTypes: true });
    // Only a regular file is a marker: a folder named `x.yaml.done` says nothing about x.yaml.
    const markers = new Set(entries.filter((e) => e.isFile()).map((e) => markedInput(e.name)));
    const out: ListedInput[] = [];
    const folder = await this.sticky.folder();
    for (const e of entries) {
      if (!classifyName(e.name).take) continue;
      const info = await lstat(this.where('top', e.name)).catch(() => undefined);
      if (!info || this.sticky.leftAlone(e.name, info, folder)) continue; // gone: taken by another instance
      if (info.isSymbolicLink())
        this.sticky.tellOnce(e.name, 'is a symbolic link; links are not followed (copy the file in instead)');
      else if (!info.isFile()) this.sticky.tellOnce(e.name, 'is not a regular file');
      else out.push({ name: e.name, size: info.size, mtimeMs: info.mtimeMs, marked: markers.has(e.name) });
    }
    return out;
  }

  override async claim(name: string): Promise<ClaimedInput | undefined> {
    if (!classifyName(name).take) return undefined;
    if (nameBytes(name) > MAX_INPUT_NAME_BYTES) {
      await this.setAsideLongName(name);
      return undefined;
    }
    await this.assertHeld('processing');
    return super.claim(name);
  }

  /**
   * A name whose claim, reports or timestamped name would pass the file system's limit (255
   * bytes) cannot be processed: it is moved straight to failed/ under a short unique name
   * (shortName) with an errors.txt saying why, so it never blocks the scan. The claim is taken
   * under the short name, so two instances never both move it.
   */
  private async setAsideLongName(name: string): Promise<void> {
    const short = shortName(name, createHash('sha256').update(name).digest('hex'));
    await this.assertHeld('processing');
    await this.assertHeld('failed');
    const lease = await this.leases.tryAcquire(this.leaseName(short));
    if (!lease) return;
    try {
      const { name: final } = await this.freeName('failed', short);
      const errors = reportPaths(this.in('failed', final)).errors;
      await removeStraysOf([errors], this.opts.logger);
      await writeFileAtomic(errors, longNameErrors(name, short));
      try {
        await rename(this.where('top', name), this.in('failed', final));
        await this.assertHeld('failed');
      } catch (err) {
        await rm(errors, { force: true });
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        // failed/ was swapped: the input goes back to the top, its name still too long, and is tried again.
        if (err instanceof SourceError)
          await rename(this.in('failed', final), this.where('top', name)).catch(() => undefined);
        throw err;
      }
      this.opts.onRefused?.(name, `its name is too long (${nameBytes(name)} bytes); set aside as failed/${final}`);
    } finally {
      await lease.release();
    }
  }

  protected claimName(name: string): string {
    return this.in('processing', `.${name}.claim`);
  }

  /** Regular files in processing/, and claims whose input is gone (a crash between finishing and dropping the claim). */
  protected async orphanNames(): Promise<string[]> {
    const names = await readdir(this.in('processing'));
    const present = new Set(names);
    const out = names.map((n) => /^\.(.+)\.claim$/.exec(n)?.[1]).filter((n) => n !== undefined && !present.has(n));
    for (const name of names) {
      if (classifyName(name).take && (await lstat(this.in('processing', name)).catch(() => undefined))?.isFile())
        out.push(name);
    }
    return out as string[];
  }

  protected async take(name: string, slot: NewSlot, fromTop: boolean): Promise<Taken<FolderClaim> | undefined> {
    const at = this.in('processing', name);
    // A file left in processing/ is resumed first (and a marker a crash left at the top removed).
    if (await occupied(at)) await removeStaleMarker(this.where('top', name), DONE_MARKER_SUFFIX);
    else if (!(fromTop && (await this.intoProcessing(name)))) return undefined;
    const verified = await copyVerified(at, await slot(), name, this.maxInputBytes);
    if (typeof verified === 'string') return { facts: {}, refused: verified };
    const artworkFolder = this.top && { ...this.top, readerUid: verified.uid };
    return { facts: { verified }, sha256: verified.sha256, ...(artworkFolder ? { artworkFolder } : {}) };
  }

  /** Renames `name` from the top into processing/; false when it is gone or the sticky bit refuses it. */
  private async intoProcessing(name: string): Promise<boolean> {
    try {
      await rename(this.where('top', name), this.in('processing', name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (await this.sticky.refused(name, err))) return false;
      throw err;
    }
    try {
      await this.assertHeld('processing');
    } catch (err) {
      // Back to the top, where the next scan finds it once processing/ is a folder of ours again.
      await rename(this.in('processing', name), this.where('top', name)).catch(() => undefined);
      throw err;
    }
    // The marker has served; left behind it would wave through the next file of this name half-written.
    await removeFile(this.where('top', `${name}${DONE_MARKER_SUFFIX}`));
    return true;
  }

  protected async recheck(name: string, { verified }: FolderClaim): Promise<InputChange | undefined> {
    return verified && changeOf(this.in('processing', name), verified);
  }

  /** Its ctime: the claim's rename into processing/. */
  protected async claimedAt(name: string): Promise<number | undefined> {
    return (await lstat(this.in('processing', name)).catch(() => undefined))?.ctimeMs;
  }

  protected async namesIn(outcome: FinishOutcome, start: string): Promise<string[]> {
    return (await readdir(this.in(outcome))).filter((n) => n.startsWith(start));
  }

  protected async occupants(outcome: FinishOutcome, name: string): Promise<Occupant[]> {
    const names = [name, ...reportNames(name)];
    const seen = await Promise.all(names.map((n) => lstat(this.in(outcome, n)).catch(() => undefined)));
    return seen.flatMap((s, i) =>
      s ? [{ input: i === 0, regular: s.isFile(), mtimeMs: s.mtimeMs, claimed: false }] : [],
    );
  }

  /**
   * Reports are written whole under hidden temporary names in `outcome`, then renamed into place
   * back to back: a crash while writing leaves only hidden files (the resumed input takes its
   * own name; freshTemporaries removes stale ones). Mode and group follow the input's.
   */
  protected async stage(outcome: FinishOutcome, final: string, { verified }: FolderClaim): Promise<Staged> {
    await this.assertHeld(outcome);
    const file = reportFileOptions(verified, await this.held[outcome]?.stats());
    const paths = await freshTemporaries(reportPaths(this.in(outcome, final)), this.opts.logger);
    return { paths, file: { ...file, staged: true } };
  }

  protected async place(outcome: FinishOutcome, final: string, kind: keyof ReportPaths, from: string): Promise<void> {
    await rename(from, reportPaths(this.in(outcome, final))[kind]);
  }

  protected async removeReports(where: FinishOutcome, name: string, kinds = REPORT_KINDS): Promise<void> {
    const paths = reportPaths(this.in(where, name));
    await Promise.all(kinds.map((kind) => unlinkQuiet(paths[kind])));
    await this.assertHeld(where);
  }

  /**
   * After the move, the folder's name must still lead to the held folder and the final name to
   * the input (device and inode). Else someone swapped the folder meanwhile: the move is undone
   * through the held folders (the input back to processing/, its claim kept, so it is resumed,
   * never lost; its reports removed) and the finish fails.
   */
  protected async moveIn(
    outcome: FinishOutcome,
    name: string,
    final: string,
    { verified }: FolderClaim,
    undo: () => Promise<void>,
  ): Promise<Finished | undefined> {
    const at = this.in('processing', name);
    const input = await lstat(at);
    await rename(at, this.in(outcome, final));
    const held = this.held[outcome];
    if (!held || !(await held.intact()) || !(await held.holds(final, input))) {
      if (await held?.holds(final, input)) await rename(this.in(outcome, final), at).catch(() => undefined);
      await undo();
      throw new SourceError(`${this.where(outcome, final)} is not the input moved there; the move was undone`, 'usage');
    }
    // What was processed is what was copied: a change since, even one made before the move, shows.
    if (!verified) return undefined;
    const [{ dev, ino }, { size, mtimeMs }] = [input, verified];
    return { outcome, name: final, location: this.where(outcome, final), dev, ino, size, mtimeMs };
  }

  protected async requeueIn(name: string): Promise<string> {
    const path = this.in('processing', name);
    const back = await firstFree(name, this.options.clock, (c) => this.putAtTop({ path }, c));
    return back === 'gone' ? this.where('processing', name) : back;
  }

  protected async toGiveBack(where: FinishOutcome, name: string, expected?: Finished): Promise<Entry | undefined> {
    await this.assertHeld(where);
    const path = this.in(where, name);
    if (expected) return (await this.held[where]?.holds(name, expected)) ? { path, expected } : undefined;
    const info = await lstat(path).catch(() => undefined);
    return info?.isFile() ? { path, expected: info } : undefined;
  }

  /** Never over another file; what arrives must be the entry itself (moveNoClobber), else the move is undone and this throws. */
  protected async putAtTop({ path, expected }: Entry, candidate: string): Promise<string | 'taken' | 'gone'> {
    const to = this.where('top', candidate);
    const moved = await moveNoClobber(path, to, expected);
    if (moved === 'swapped')
      throw new SourceError(`${to} is not the file that was processed; it was not given back`, 'usage');
    return moved === 'moved' ? to : moved;
  }

  lookFinished(f: Finished): Promise<FileLook | undefined> {
    return lstat(this.in(f.outcome, f.name)).catch(() => undefined);
  }

  giveBackFinished(f: Finished): Promise<string | undefined> {
    return this.giveBack(f.outcome, f.name, f);
  }

  async listHeld(): Promise<string[]> {
    await this.assertHeld('held');
    const entries = await readdir(this.in('held'), { withFileTypes: true });
    return entries.filter((e) => e.isFile() && classifyName(e.name).take).map((e) => e.name);
  }

  async heldHash(name: string): Promise<string | undefined> {
    if (!classifyName(name).take) return undefined;
    await this.assertHeld('held');
    return hashHeld(
      this.in('held', name),
      this.maxInputBytes,
      async () => (await this.held.held?.stillHeld()) === true,
    );
  }

  protected readMark(): Promise<string | undefined> {
    return readSmallFile(join(this.location, LEDGER_MARK), 4096);
  }

  protected writeMark(text: string, replace: boolean): Promise<boolean> {
    return writeFileExclusive(join(this.location, LEDGER_MARK), text, replace);
  }

  protected async closeStore(): Promise<void> {
    this.claims.close();
    for (const k of SUB_FOLDERS) {
      await this.held[k]?.close();
      delete this.held[k];
    }
  }
}
