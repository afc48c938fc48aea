import { createHash, randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { link, lstat, mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type ReportPaths, reportPaths } from '../../report/report-paths.js';
import { type NewFileOptions, writeFileAtomic } from '../../storage/atomic-write.js';
import { FolderLeases, type LinkFile, linkRefused } from '../../storage/folder-lease.js';
import { type FolderPin, pinFolder } from '../../storage/folder-file.js';
import { HeldFolder, type Identity, sameIdentity } from '../../storage/held-folder.js';
import { type Lease, type LeaseStore, newOwnerId } from '../../storage/lease.js';
import { DROP_ID_FILE, dropId } from './drop-id.js';
import {
  DONE_MARKER_SUFFIX,
  MAX_INPUT_NAME_BYTES,
  NAME_MAX_BYTES,
  classifyName,
  isOwnTemporary,
  markedInput,
  nameBytes,
  reportNames,
  shortName,
  timestampedName,
} from './drop-names.js';
import { claimEach } from './orphans.js';
import { refusalKey, stickyRefusal } from './sticky-claims.js';
import { DEFAULT_SETTLE_WINDOW_MS, type SettleEvent, SettleList, type Settling, settleVerdict } from './settling.js';
import { initialised, makeWorkFolder, type Slot, WorkSlots } from './work-folder.js';
import {
  ClaimLostError,
  DEFAULT_LAYOUT,
  REPORT_KINDS,
  SourceError,
  assertLayout,
  type ClaimedInput,
  type DropLayout,
  type DropSource,
  type FinishOutcome,
  type InputChange,
  type ListedInput,
  type WriteReports,
} from './model.js';

export interface FolderSourceOptions {
  layout?: DropLayout;
  /** A claim not renewed for this long belongs to a dead instance. Default 30 s. */
  leaseMs?: number;
  /** Told once per name about links and other things that are refused (not inputs). */
  onRefused?: (name: string, why: string) => void;
  /**
   * Where private copies of claimed inputs are made (a 0700 folder of this process, created
   * with mkdtemp; default the system's temporary folder). The state directory in `watch`.
   */
  workDir?: string;
  /** Largest input copied for processing; a larger one is set aside to failed/. Default 1 GiB. */
  maxInputBytes?: number;
  /** How claims are linked to the lease token (fs.linkSync); tests pass one that refuses, as some SMB shares do. */
  linkFile?: LinkFile;
  /**
   * How long a file moved to done/ or failed/ is watched for a writer still writing into it
   * (settling.ts); 0: not at all. Default 10 minutes (the `settleWindowMs` setting).
   */
  settleWindowMs?: number;
  /** Told when a settling file changed: given back to the top, or why it could not be. */
  onSettled?: (e: SettleEvent) => void;
  /**
   * Where claims are taken instead of as folder leases in processing/: the ledger database's
   * leases (`ledgerUrl`), judged by its one clock; named by the folder's id (drop-id.ts).
   */
  claims?: LeaseStore;
}

/** Settling files are looked at during scans, at most this often: each look is one lstat per file. */
const SETTLE_CHECK_GAP_MS = 1000;
/** At most this many settling files are looked at in one scan (a round trip each on a share); more take turns. */
const SETTLE_LOOKS_PER_SCAN = 500;

/** Default of `maxInputBytes` (the `watchMaxInputBytes` setting). */
export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024 * 1024;

/** Our effective group, a new file's group outside a setgid folder (looked up once). */
let egid: number | undefined;

/** The set-group-ID bit of a folder's mode: new files in it get the folder's group. */
const S_ISGID = 0o2000;

/** O_NOFOLLOW: a link at the name fails with ELOOP; O_NONBLOCK: a FIFO swapped in cannot block the open. */
const OPEN_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The sub-folders made and held from init. */
const SUB_FOLDERS = ['processing', 'done', 'failed', 'held'] as const satisfies readonly (keyof DropLayout)[];

/**
 * The claimed file as opened and checked: what reports take their mode and group from, and
 * what was copied (size, mtime, inode, sha256 of the bytes), to tell later whether it changed.
 */
interface Verified {
  mode: number;
  gid: number;
  uid: number;
  copied: Fingerprint;
}

interface Fingerprint {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

/**
 * A drop folder (`htorder watch DIR`), safe for several instances on one folder, also on
 * NFS/SMB. A claim is the folder lease `processing/.NAME.claim` (folder-lease.ts: one instance
 * wins; an expired or dead holder's is taken over), then a rename of `NAME` into `processing/`;
 * finishing renames the reports, then the input, into `done/` or `failed/`, never over an older
 * file. Links are never followed, and the pipeline reads only a private copy made through one
 * O_NOFOLLOW handle (docs/watch.md#exactly-once-several-instances-crashes,
 * docs/security.md#drop-folders-links-swaps-and-odd-names).
 */
export class FolderSource implements DropSource {
  readonly location: string;
  readonly needsStability = true;
  private readonly layout: Required<DropLayout>;
  private readonly leaseMs: number;
  /** The claims as folder leases in processing/, unless they are the database's. */
  private readonly folderClaims: FolderLeases | undefined;
  private readonly claims: LeaseStore;
  /** The folder's id, which the database's claims are named by (init). */
  private id: string | undefined;
  private readonly refused = new Set<string>();
  /** Files whose claim the sticky bit refused, by name: left alone while refusalKey stays the same. */
  private readonly stuck = new Map<string, string>();
  private work: string | undefined;
  /** Where inputs' copies are made in the private folder: reused folders and files (work-folder.ts). */
  private readonly slots = new WorkSlots();
  /** processing/, done/ and failed/, held open from init: every file is created and moved through them. */
  private readonly held: Partial<Record<keyof DropLayout, HeldFolder>> = {};
  /** The drop folder itself, pinned at init: where dropped manifests' `artwork:` files are read. */
  private top: FolderPin | undefined;
  /** Files this instance moved to done/ or failed/, watched for the settle window. */
  private readonly settling: SettleList;
  private lastSettleCheck = -Infinity;

  constructor(
    dir: string,
    private readonly opts: FolderSourceOptions = {},
  ) {
    this.location = resolve(dir);
    this.layout = { ...DEFAULT_LAYOUT, ...opts.layout };
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.settling = new SettleList(opts.settleWindowMs ?? DEFAULT_SETTLE_WINDOW_MS);
    this.folderClaims = opts.claims
      ? undefined
      : new FolderLeases({
          owner: newOwnerId(),
          leaseMs: this.leaseMs,
          ...(opts.linkFile ? { link: opts.linkFile } : {}),
        });
    this.claims = opts.claims ?? (this.folderClaims as FolderLeases);
  }

  /** Where `name` in sub-folder `which` is, for people (reports, logs). */
  private sub(which: keyof DropLayout, name = ''): string {
    return join(this.location, this.layout[which], name);
  }

  /** The path to act on `name` in sub-folder `which` through its held folder (held-folder.ts), never through its name. */
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
      `the ${which} folder ${this.sub(which)} was replaced (renamed, or swapped with a link) while watched; ` +
        'refusing to move files through it (make the drop folder sticky: chmod +t)',
      'usage',
    );
  }

  async init(): Promise<void> {
    assertLayout(this.layout, 'folder');
    const info = await stat(this.location).catch(() => undefined);
    if (!info) throw new SourceError(`the drop folder ${this.location} does not exist`, 'usage');
    if (!info.isDirectory()) throw new SourceError(`${this.location} is not a folder`, 'usage');
    assertSticky(this.location, info);
    this.top = pinFolder(this.location);
    for (const k of SUB_FOLDERS) {
      await mkdir(this.sub(k), { recursive: true });
      await this.assertOwnFolder(k);
      const held = await HeldFolder.open(this.sub(k));
      if (!held) throw new SourceError(`the ${k} folder ${this.sub(k)} is not a folder`, 'usage');
      await this.held[k]?.close();
      this.held[k] = held;
      await this.assertHeld(k);
      await this.sweepAbandoned(k);
    }
    this.folderClaims?.sweep(this.in('processing'));
    if (!this.folderClaims) this.id = await dropId(this.in('processing', DROP_ID_FILE));
    this.work = await makeWorkFolder(this.opts.workDir);
  }

  /**
   * Removes htorder's own temporary files that an instance killed mid-write left in `k`
   * (a claim renewal's temp file, staged reports, a stale claim moved aside): hidden, so never
   * taken as inputs, but they would pile up in the user's folders. Only those untouched for
   * ten minutes and four leases: each lives for milliseconds, and another instance, alive on
   * another machine, may be writing one right now.
   */
  private async sweepAbandoned(k: keyof DropLayout): Promise<void> {
    const before = Date.now() - Math.max(10 * 60_000, 4 * this.leaseMs);
    for (const name of await readdir(this.in(k))) {
      if (!isOwnTemporary(name)) continue;
      const info = await lstat(this.in(k, name)).catch(() => undefined);
      if (info?.isFile() && info.mtimeMs < before) await rm(this.in(k, name), { force: true });
    }
  }

  /**
   * processing/, done/ and failed/ must be real folders inside the drop folder: anyone who can
   * drop a file could otherwise pre-create `done` as a symbolic link and have every input and
   * report moved wherever it points. mkdir -p accepts an existing link, so lstat says.
   * Checked at start; then the folder is held (assertHeld).
   */
  private async assertOwnFolder(k: keyof DropLayout): Promise<Stats | undefined> {
    const info = await lstat(this.sub(k)).catch(() => undefined);
    if (info?.isSymbolicLink()) {
      throw new SourceError(
        `the ${k} folder ${this.sub(k)} is a symbolic link; refusing to move files through it (make it a real folder)`,
        'usage',
      );
    }
    if (info && !info.isDirectory()) throw new SourceError(`${this.sub(k)} is not a folder`, 'usage');
    return info;
  }

  async list(): Promise<ListedInput[]> {
    // First: a finished file given back now is listed by this very scan.
    await this.settleCheck();
    const entries = await readdir(this.location, { withFileTypes: true });
    // Only a regular file is a marker: a folder named `x.yaml.done` says nothing about x.yaml.
    const markers = new Set(
      entries
        .filter((e) => e.isFile())
        .map((e) => markedInput(e.name))
        .filter((n): n is string => n !== undefined),
    );
    const out: ListedInput[] = [];
    const folder = this.stuck.size > 0 ? await lstat(this.location).catch(() => undefined) : undefined;
    for (const e of entries) {
      if (!classifyName(e.name).take) continue;
      const info = await lstat(join(this.location, e.name)).catch(() => undefined);
      if (!info) continue; // taken by another instance between readdir and lstat
      if (this.stillStuck(e.name, info, folder)) continue;
      if (info.isSymbolicLink())
        this.refuse(e.name, 'is a symbolic link; links are not followed (copy the file in instead)');
      else if (!info.isFile()) this.refuse(e.name, 'is not a regular file');
      else out.push({ name: e.name, size: info.size, mtimeMs: info.mtimeMs, marked: markers.has(e.name) });
    }
    return out;
  }

  /** Whether `name`'s claim was refused by the sticky bit and nothing has changed since (forgotten once it has). */
  private stillStuck(name: string, info: Stats, folder: Stats | undefined): boolean {
    const key = this.stuck.get(name);
    if (key === undefined) return false;
    if (folder !== undefined && key === refusalKey(info, folder)) return true;
    this.stuck.delete(name);
    return false;
  }

  /**
   * A claim's rename refused (EPERM, EACCES): when the sticky bit is why (the file and the folder
   * belong to other users), it is said once, with the fix, and the file is left alone until it
   * or the folder changes; true then. Otherwise false: the error stands.
   */
  private async refusedBySticky(name: string, err: unknown): Promise<boolean> {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EACCES') return false;
    const [file, folder] = await Promise.all([
      lstat(join(this.location, name)).catch(() => undefined),
      lstat(this.location).catch(() => undefined),
    ]);
    const why = file && folder && stickyRefusal(this.location, file, folder);
    if (!file || !folder || why === undefined) return false;
    this.stuck.set(name, refusalKey(file, folder));
    this.opts.onRefused?.(name, why);
    return true;
  }

  private refuse(name: string, why: string): void {
    if (this.refused.has(name)) return;
    this.refused.add(name);
    this.opts.onRefused?.(name, why);
  }

  async claim(name: string): Promise<ClaimedInput | undefined> {
    if (!classifyName(name).take) return undefined;
    if (nameBytes(name) > MAX_INPUT_NAME_BYTES) {
      await this.setAsideLongName(name);
      return undefined;
    }
    await this.assertHeld('processing');
    const lease = await this.createClaim(name);
    if (!lease) return undefined;
    // An earlier file of this name is still in processing/ (released at a shutdown): resume
    // that one first; renaming over it would lose it. The new one is taken on a later scan.
    if (await occupied(this.in('processing', name))) return await this.claimed(name, lease);
    try {
      await rename(join(this.location, name), this.in('processing', name));
    } catch (err) {
      await lease.release();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (await this.refusedBySticky(name, err))) return undefined;
      throw err;
    }
    try {
      await this.assertHeld('processing');
    } catch (err) {
      // Back to the top, where the next scan finds it once processing/ is a folder of ours again.
      await rename(this.in('processing', name), join(this.location, name)).catch(() => undefined);
      await lease.release();
      throw err;
    }
    // The marker has served its purpose; left behind it would wave through the next file of
    // this name half-written. Only a regular file is removed: a folder of that name stays (and
    // is refused by the scan), and failing to remove it never strands the input.
    const marker = join(this.location, `${name}${DONE_MARKER_SUFFIX}`);
    if ((await lstat(marker).catch(() => undefined))?.isFile())
      await rm(marker, { force: true }).catch(() => undefined);
    return await this.claimed(name, lease);
  }

  /**
   * A name whose claim file, reports or timestamped name in failed/ would pass the file
   * system's limit on a name (255 bytes) cannot be processed: it is moved straight to failed/
   * under a short unique name (shortName) with an errors.txt saying why, so it never blocks
   * the scan. The claim is taken under the short name, so two instances never both move it.
   */
  private async setAsideLongName(name: string): Promise<void> {
    const short = shortName(name, createHash('sha256').update(name).digest('hex'));
    await this.assertHeld('processing');
    await this.assertHeld('failed');
    const lease = await this.createClaim(short);
    if (!lease) return;
    try {
      const { name: final } = await this.freeName('failed', short);
      const why =
        `${short}: set aside unread: its name was ${nameBytes(name)} bytes long ("${name.slice(0, 60)}…"); ` +
        `watch takes names of up to ${MAX_INPUT_NAME_BYTES} bytes, because its reports, claim and ` +
        `timestamped names add to it and a file name may not exceed ${NAME_MAX_BYTES} bytes. ` +
        'Rename the file to a shorter name and drop it again.\n';
      const errors = reportPaths(this.in('failed', final)).errors;
      await writeFileAtomic(errors, why);
      try {
        await rename(join(this.location, name), this.in('failed', final));
        await this.assertHeld('failed');
      } catch (err) {
        await rm(errors, { force: true });
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        // failed/ was swapped: the input goes back to the top, its name still too long, and is tried again.
        if (err instanceof SourceError)
          await rename(this.in('failed', final), join(this.location, name)).catch(() => undefined);
        throw err;
      }
      this.opts.onRefused?.(name, `its name is too long (${nameBytes(name)} bytes); set aside as failed/${final}`);
    } finally {
      await lease.release();
    }
  }

  /** Takes the claim, or takes an expired one over; undefined while a live instance holds it. */
  private createClaim(name: string): Promise<Lease | undefined> {
    if (this.folderClaims) return this.claims.tryAcquire(this.in('processing', `.${name}.claim`));
    return this.claims.tryAcquire(JSON.stringify(['claim', `folder:${this.id}`, name]));
  }

  async claimOrphans(): Promise<ClaimedInput[]> {
    const names = await readdir(this.in('processing'));
    const present = new Set(names);
    const claimOne = async (name: string): Promise<ClaimedInput | undefined> => {
      if (!classifyName(name).take) return undefined;
      const info = await lstat(this.in('processing', name)).catch(() => undefined);
      if (!info?.isFile()) return undefined;
      const lease = await this.createClaim(name);
      return lease && (await this.claimed(name, lease));
    };
    // First (nothing claimed yet to give back if it fails): expired claims whose input is gone
    // (a crash between finishing and dropping the claim).
    for (const name of names) {
      const m = /^\.(.+)\.claim$/.exec(name);
      if (m?.[1] !== undefined && !present.has(m[1])) await (await this.createClaim(m[1]))?.release();
    }
    return claimEach(names, claimOne, { renewEveryMs: this.leaseMs / 3 });
  }

  /**
   * The claimed input as the pipeline sees it: its private copy (copyVerified), or `refused`
   * saying why it is set aside unread; its reports are written once, at finish.
   */
  private async claimed(name: string, lease: Lease): Promise<ClaimedInput> {
    const path = this.in('processing', name);
    const slot = await this.slots.take(initialised(this.work)).catch(async (err: unknown) => {
      await lease.release().catch(() => undefined);
      throw err;
    });
    const copy = slot.pathFor(name);
    let verified: Verified | undefined;
    let refused: string | undefined;
    // The copy goes with the claim (finish, release, requeue, forget); its slot is then free for another input.
    const dropCopy = (): Promise<void> => slot.drop();
    try {
      const checked = await this.copyVerified(path, slot, name);
      if ('refused' in checked) refused = checked.refused;
      else verified = checked;
    } catch (err) {
      // Not taken after all: the input stays in processing/, where an orphan search finds it.
      await dropCopy();
      await lease.release().catch(() => undefined);
      throw err;
    }
    const takenOver = `the claim on ${name} was taken over by another instance`;
    return {
      name,
      path: copy,
      location: this.sub('processing', name),
      ...(verified ? { sha256: verified.copied.sha256 } : {}),
      ...(verified && this.top ? { artworkFolder: { ...this.top, readerUid: verified.uid } } : {}),
      ...(refused === undefined ? {} : { refused }),
      renew: () => lease.renew(),
      finish: async (outcome: FinishOutcome, writeReports?: WriteReports) => {
        await this.assertHeld(outcome);
        // Taken over (our lease ran out during a stall)? The claim is the truth: hands off.
        if (lease.lost()) throw new ClaimLostError(takenOver);
        const input = await lstat(path);
        const folder = await this.held[outcome]?.stats();
        const placed = await this.placeReports(outcome, name, writeReports, reportFileOptions(verified, folder));
        // The private copy has served: gone before the input is moved, so a finished input leaves nothing behind.
        await dropCopy();
        await rename(path, this.in(outcome, placed.name));
        await this.settle(outcome, placed, input, name);
        // What was processed is what was copied: a change since then, even one made before the
        // move, shows as a difference at the first look.
        if (verified) {
          const { size, mtimeMs } = verified.copied;
          this.settling.add({ outcome, name: placed.name, dev: input.dev, ino: input.ino, size, mtimeMs }, Date.now());
        }
        await lease.release();
        return this.sub(outcome, placed.name);
      },
      release: async () => {
        await lease.release();
        await dropCopy();
      },
      forget: dropCopy,
      recheck: async () => (verified ? await changeOf(path, verified.copied) : undefined),
      requeue: async () => {
        if (lease.lost()) throw new ClaimLostError(takenOver);
        await dropCopy();
        const back = await this.putBack(this.in('processing', name), name);
        await lease.release();
        return back ?? this.sub('processing', name);
      },
    };
  }

  /**
   * Puts the reports in done/ or failed/ under the input's free name; returns its final path.
   * They are written whole under hidden temporary names, then renamed back to back: a crash
   * while writing leaves only hidden files, so the resumed input still takes its own name. A
   * kill between those renames and the input's move leaves some reports under its name without
   * the input: this input's own cut-short finish (ownCutFinish), finished over, not beside.
   */
  private async placeReports(
    outcome: FinishOutcome,
    name: string,
    writeReports: WriteReports | undefined,
    file: NewFileOptions,
  ): Promise<Placed> {
    const { name: finalName, resumed } = await this.freeName(outcome, name, await this.claimedAt(name));
    if (!writeReports) return { name: finalName, reports: [] };
    const finals = reportPaths(this.in(outcome, finalName));
    const tag = `${process.pid}.${randomBytes(4).toString('hex')}`;
    const names = reportPaths(finalName);
    const hidden = (kind: keyof ReportPaths): string => this.in(outcome, `.${names[kind]}.${tag}.tmp`);
    const staged: ReportPaths = { json: hidden('json'), csv: hidden('csv'), errors: hidden('errors') };
    const reports: string[] = [];
    try {
      const shownAs = this.sub(outcome, finalName);
      const wrote = await writeReports({ paths: staged, inputShownAs: shownAs, file: { ...file, staged: true } });
      for (const kind of REPORT_KINDS) {
        // A report the cut-short finish placed and this one did not write (errors.txt) goes.
        if (wrote[kind] === undefined) {
          if (resumed) await rm(finals[kind], { force: true });
          continue;
        }
        await rename(staged[kind], finals[kind]);
        reports.push(finals[kind]);
      }
    } catch (err) {
      await Promise.all([
        ...REPORT_KINDS.map((kind) => rm(staged[kind], { force: true })),
        ...reports.map(unlinkQuiet),
      ]);
      throw err;
    }
    return { name: finalName, reports };
  }

  /**
   * After the input's move into `outcome`: the folder's name must still lead to the held folder
   * and the input's final name to the input (device and inode). Else someone swapped the folder
   * meanwhile: the move is undone through the held folders (the input back to processing/,
   * its claim kept, so it is resumed, never lost; its reports removed) and the finish fails.
   */
  private async settle(outcome: FinishOutcome, placed: Placed, input: Identity, name: string): Promise<void> {
    const held = this.held[outcome];
    if (held && (await held.intact()) && (await held.holds(placed.name, input))) return;
    if (await held?.holds(placed.name, input))
      await rename(this.in(outcome, placed.name), this.in('processing', name)).catch(() => undefined);
    await Promise.all(placed.reports.map(unlinkQuiet));
    await this.assertHeld(outcome);
    throw new SourceError(
      `${this.sub(outcome, placed.name)} is not the input moved there; the move was undone`,
      'usage',
    );
  }

  /**
   * Moves the file at `from` (a claimed input in processing/, or a finished one in done/ or
   * failed/ that changed within its settle window) back to the top of the drop folder, to wait
   * until it is stable again. A new file dropped under its name meanwhile is never replaced:
   * ours takes a timestamped name (as in done/). link() fails on an existing name, so nothing is
   * overwritten even in a race; where the file system has no hard links, a check then rename.
   * With `expected`, what arrived at the top must be that file (device and inode), else the
   * act is undone and this throws. Undefined when nothing is at `from`.
   */
  private async putBack(from: string, name: string, expected?: Identity): Promise<string | undefined> {
    const now = new Date();
    for (let attempt = 0; ; attempt++) {
      const candidate = attempt === 0 ? name : timestampedName(name, now, attempt - 1);
      const to = join(this.location, candidate);
      try {
        await link(from, to);
        await arrived(to, expected, () => unlink(to));
        await unlink(from);
        return to;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return undefined;
        if (code === 'EEXIST') continue;
        if (!linkRefused(err)) throw err;
      }
      if (await occupied(to)) continue;
      await rename(from, to);
      await arrived(to, expected, () => rename(to, from));
      return to;
    }
  }

  /**
   * Looks at the files moved to done/ or failed/ within their settle window: one that grew or
   * was written to since it was processed (a writer holding it open went on writing into it) is
   * given back to the top of the drop folder, its reports removed, and processed again in full
   * once stable; the ledger keeps what was already submitted. One that went (moved away,
   * replaced) is forgotten. A failure is told, and never fails the scan.
   */
  private async settleCheck(): Promise<void> {
    const now = Date.now();
    if (this.settling.size === 0 || now - this.lastSettleCheck < SETTLE_CHECK_GAP_MS) return;
    this.lastSettleCheck = now;
    for (const s of this.settling.live(now, SETTLE_LOOKS_PER_SCAN)) {
      const from = this.sub(s.outcome, s.name);
      const { name, outcome } = s;
      try {
        const verdict = settleVerdict(s, await lstat(this.in(outcome, name)).catch(() => undefined));
        if (verdict.kind === 'same') continue;
        this.settling.drop(s);
        if (verdict.kind === 'gone') continue;
        const to = await this.giveBackFinished(s);
        if (to) this.opts.onSettled?.({ kind: 'requeued', name, outcome, from, to, what: verdict.what });
      } catch (err) {
        this.settling.drop(s);
        this.opts.onSettled?.({ kind: 'error', name, outcome, from, error: (err as Error).message });
      }
    }
  }

  /**
   * Gives a finished file back through its held folder (never through a folder swapped in at
   * its name), checked to be the very file processed (device and inode), then removes its
   * reports: they described what it held then, and its next run writes them whole.
   */
  private async giveBackFinished(s: Settling): Promise<string | undefined> {
    await this.assertHeld(s.outcome);
    const at = this.in(s.outcome, s.name);
    if (!(await this.held[s.outcome]?.holds(s.name, s))) return undefined;
    const to = await this.putBack(at, s.name, s);
    if (to) await Promise.all(Object.values(reportPaths(at)).map(unlinkQuiet));
    return to;
  }

  /**
   * Opens `path` with O_NOFOLLOW and copies at most the size cap through that one handle into
   * the slot's kept 0600 file, named `name` once complete. Anything but a regular file with one
   * link is refused: a link (ELOOP), a FIFO or device, a hard link to someone else's file. So is
   * a file over the cap: it cannot pin the watcher. Nothing is read from a refused file.
   */
  private async copyVerified(path: string, slot: Slot, name: string): Promise<Verified | { refused: string }> {
    const unread = (why: string) => ({ refused: `set aside unread: ${why}` });
    let handle: FileHandle;
    try {
      handle = await open(path, OPEN_NO_FOLLOW);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'EMLINK')
        return unread('it is a symbolic link; links are not followed (copy the file in instead)');
      if (code === 'ENXIO' || code === 'EISDIR') return unread('it is not a regular file');
      throw err;
    }
    try {
      const before = await handle.stat();
      if (!before.isFile()) return unread('it is not a regular file');
      if (before.nlink !== 1)
        return unread(
          `it has ${before.nlink} hard links; only a file with one link is taken (copy the file in instead of linking it)`,
        );
      const max = this.opts.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
      if (before.size > max)
        return unread(
          `it is ${before.size} bytes, over the ${max}-byte limit for a dropped file (setting watchMaxInputBytes)`,
        );
      // Hashed as it is copied: what was read is what later checks compare with (changeOf).
      const hash = createHash('sha256');
      const out = await slot.open();
      try {
        const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, Math.max(1, before.size)));
        let position = 0;
        while (position < before.size) {
          const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, before.size - position), position);
          if (bytesRead === 0) break;
          hash.update(buf.subarray(0, bytesRead));
          await out.write(buf, 0, bytesRead);
          position += bytesRead;
        }
      } finally {
        await out.close();
      }
      await slot.place(name);
      // The size and mtime from before the copy: a file that changed while it was read (still
      // being written) differs at the first check, and is given back before anything is sent.
      const copied = { size: before.size, mtimeMs: before.mtimeMs, ino: before.ino, sha256: hash.digest('hex') };
      return { mode: before.mode, gid: before.gid, uid: before.uid, copied };
    } finally {
      await handle.close();
    }
  }

  /** `name`, or a timestamped variant when done/ or failed/ already has it or its reports. */
  private async freeName(
    outcome: FinishOutcome,
    name: string,
    claimedAt?: number,
  ): Promise<{ name: string; resumed: boolean }> {
    const now = new Date();
    for (let attempt = 0; ; attempt++) {
      const candidate = attempt === 0 ? name : timestampedName(name, now, attempt - 1);
      const paths = [candidate, ...reportNames(candidate)].map((n) => this.in(outcome, n));
      const taken = await Promise.all(paths.map(occupied));
      if (!taken.includes(true)) return { name: candidate, resumed: false };
      if (attempt === 0 && claimedAt !== undefined && !taken[0] && (await ownCutFinish(paths.slice(1), claimedAt)))
        return { name: candidate, resumed: true };
    }
  }

  async listHeld(): Promise<string[]> {
    await this.assertHeld('held');
    const entries = await readdir(this.in('held'), { withFileTypes: true });
    return entries.filter((e) => e.isFile() && classifyName(e.name).take).map((e) => e.name);
  }

  async heldHash(name: string): Promise<string | undefined> {
    if (!classifyName(name).take) return undefined;
    await this.assertHeld('held');
    let handle: FileHandle;
    try {
      handle = await open(this.in('held', name), OPEN_NO_FOLLOW);
    } catch {
      return undefined;
    }
    try {
      const info = await handle.stat();
      const max = this.opts.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
      if (!info.isFile() || info.nlink !== 1 || info.size > max) return undefined;
      const hash = createHash('sha256');
      for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
      return (await this.held.held?.stillHeld()) ? hash.digest('hex') : undefined;
    } finally {
      await handle.close();
    }
  }

  async takeBack(name: string): Promise<string | undefined> {
    if (!classifyName(name).take) return undefined;
    await this.assertHeld('held');
    const at = this.in('held', name);
    const info = await lstat(at).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    // What arrives at the top must be the held file itself (device and inode), else it is undone.
    const back = await this.putBack(at, name, info);
    await this.assertHeld('held');
    if (back !== undefined) await Promise.all(reportNames(name).map((r) => unlinkQuiet(this.in('held', r))));
    return back;
  }

  /** When the input in processing/ was put there (its ctime: the claim's rename), or undefined. */
  private async claimedAt(name: string): Promise<number | undefined> {
    return (await lstat(this.in('processing', name)).catch(() => undefined))?.ctimeMs;
  }

  /** Removes this instance's private folder (a crash leaves it behind in the state directory: 0700, the user's own). */
  async close(): Promise<void> {
    this.folderClaims?.close();
    for (const k of SUB_FOLDERS) {
      await this.held[k]?.close();
      delete this.held[k];
    }
    if (this.work) await rm(this.work, { recursive: true, force: true });
  }
}

/** Where an input's reports were put (paths through the held folder) and the input's free name beside them. */
interface Placed {
  name: string;
  reports: string[];
}

/** Removes a file we placed; one already gone is fine. */
function unlinkQuiet(path: string): Promise<void> {
  return rm(path, { force: true });
}

/** The sticky bit of a folder's mode: only an entry's owner (or the folder's) may rename or remove it. */
const S_ISVTX = 0o1000;

/**
 * A drop folder that group or others may write must be sticky: else anyone who may drop a
 * file may also rename the watcher's processing/, done/ and failed/, or swap them with links,
 * and have the watcher's files moved wherever they point (docs/security.md).
 */
function assertSticky(location: string, info: Stats): void {
  if ((info.mode & 0o022) === 0 || (info.mode & S_ISVTX) !== 0) return;
  const mode = (info.mode & 0o7777).toString(8).padStart(4, '0');
  throw new SourceError(
    `the drop folder ${location} (mode ${mode}) may be written by group or others but has no sticky bit, ` +
      'so a dropper could rename or swap its processing/, done/ and failed/ folders; make it sticky: ' +
      `chmod +t ${location}`,
    'usage',
  );
}

/**
 * After a move to the top: the entry at `to` must be the file `expected` (device and inode);
 * else what was moved was not it (its name was swapped meanwhile), and `undo` puts it back.
 */
async function arrived(to: string, expected: Identity | undefined, undo: () => Promise<void>): Promise<void> {
  if (!expected) return;
  const now = await lstat(to).catch(() => undefined);
  if (now && sameIdentity(now, expected)) return;
  await undo().catch(() => undefined);
  throw new SourceError(`${to} is not the file that was processed; it was not given back`, 'usage');
}

/** Whether anything is at `path`: a file, a folder or a link, dangling or not (lstat follows none). */
/**
 * Whether the reports at `paths` (the input's own name not taken) are this input's own finish,
 * cut short between placing them and moving the input: each one there is a regular file made
 * since the input was claimed. An older input's reports under the name predate the claim.
 */
async function ownCutFinish(paths: string[], claimedAt: number): Promise<boolean> {
  for (const path of paths) {
    const s = await lstat(path).catch(() => undefined);
    if (s && (!s.isFile() || s.mtimeMs < claimedAt)) return false;
  }
  return true;
}

function occupied(path: string): Promise<boolean> {
  return lstat(path)
    .then(() => true)
    .catch(() => false);
}

/**
 * How the file at `path` (in processing/) differs from what was copied at claim, or undefined.
 * Opened like the claim (no link followed, no FIFO can block); size, mtime and inode first,
 * then the sha256 of its bytes, which catches a rewrite that kept both size and mtime (a coarse
 * mtime on a network share). One more byte than was copied is read, so growth shows too.
 */
async function changeOf(path: string, copied: Fingerprint): Promise<InputChange | undefined> {
  const next = 'will be processed again once stable';
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_NO_FOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { what: 'it is gone from processing/', next: 'nothing is left to process' };
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR')
      return { what: 'it was replaced by something that is not a regular file', next };
    throw err;
  }
  try {
    const now = await handle.stat();
    if (!now.isFile() || now.ino !== copied.ino) return { what: 'it was replaced by another file', next };
    if (now.size !== copied.size) return { what: `its size changed from ${copied.size} to ${now.size} bytes`, next };
    if (now.mtimeMs !== copied.mtimeMs) return { what: 'its modification time changed', next };
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, copied.size + 1));
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, position);
      hash.update(buf.subarray(0, bytesRead));
      position += bytesRead;
      // A short read of a regular file is its end: a small file takes one read, not two.
      if (bytesRead < buf.length || position > copied.size) break;
    }
    if (position !== copied.size || hash.digest('hex') !== copied.sha256)
      return { what: 'its content changed (same size and modification time)', next };
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Mode and group of an input's reports: the input's group where the owner may set it, never
 * more readable than the input (owner read-write, group and others read only where the input
 * allowed it, nobody else writes). An input refused unread (not checked) gets 0600. The group
 * is left out when a new file in `folder` gets it anyway (the folder's own when it is setgid,
 * else ours): no chown to set what is already so.
 */
function reportFileOptions(input: Verified | undefined, folder: Stats | undefined): NewFileOptions {
  const mode = 0o600 | ((input?.mode ?? 0) & 0o044);
  if (!input) return { mode };
  egid ??= process.getegid?.() ?? -1;
  const inherited = folder && folder.mode & S_ISGID ? folder.gid : egid;
  return input.gid === inherited ? { mode } : { mode, gid: input.gid };
}
