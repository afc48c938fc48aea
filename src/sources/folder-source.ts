import { lstat, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../storage/atomic-write.js';
import {
  DONE_MARKER_SUFFIX,
  classifyName,
  isSafeName,
  markedInput,
  reportNames,
  timestampedName,
} from './drop-names.js';
import { isExpired, leaseRecord, newOwnerId, parseLease } from '../storage/lease.js';
import {
  ClaimLostError,
  DEFAULT_LAYOUT,
  SourceError,
  type ClaimedInput,
  type DropLayout,
  type DropSource,
  type FinishOutcome,
  type ListedInput,
} from './model.js';

export interface FolderSourceOptions {
  layout?: DropLayout;
  /** A claim not renewed for this long belongs to a dead instance. Default 30 s. */
  leaseMs?: number;
  /** Told once per name about links and other things that are refused (not inputs). */
  onRefused?: (name: string, why: string) => void;
}

/**
 * A drop folder (docs/watch.md, `htorder watch DIR`), safe for several instances on one
 * folder, also on NFS/SMB:
 * - claim: create `processing/.NAME.claim` exclusively (O_EXCL: one instance wins), then
 *   rename `NAME` into `processing/` (ENOENT: another instance already took and finished it);
 * - the claim file holds owner, host, pid and a lease the holder renews; a claim whose lease
 *   ran out, or whose process is gone from this host, is taken over (crash recovery);
 * - finish: reports then input renamed into `done/` or `failed/`, never over an older file.
 * Links are never followed: entries are lstat'ed and anything but a regular file is refused.
 */
export class FolderSource implements DropSource {
  readonly location: string;
  readonly needsStability = true;
  private readonly layout: DropLayout;
  private readonly leaseMs: number;
  private readonly owner = newOwnerId();
  private readonly refused = new Set<string>();

  constructor(
    dir: string,
    private readonly opts: FolderSourceOptions = {},
  ) {
    this.location = resolve(dir);
    this.layout = opts.layout ?? DEFAULT_LAYOUT;
    this.leaseMs = opts.leaseMs ?? 30_000;
  }

  private sub(which: keyof DropLayout, name = ''): string {
    return join(this.location, this.layout[which], name);
  }

  private claimFile(name: string): string {
    return this.sub('processing', `.${name}.claim`);
  }

  async init(): Promise<void> {
    for (const k of ['processing', 'done', 'failed'] as const) {
      if (!isSafeName(this.layout[k]))
        throw new SourceError(`the ${k} folder name "${this.layout[k]}" must be a plain name`, 'usage');
    }
    let info: Stats;
    try {
      info = await stat(this.location);
    } catch {
      throw new SourceError(`the drop folder ${this.location} does not exist`, 'usage');
    }
    if (!info.isDirectory()) throw new SourceError(`${this.location} is not a folder`, 'usage');
    for (const k of ['processing', 'done', 'failed'] as const) {
      await mkdir(this.sub(k), { recursive: true });
      await this.assertOwnFolder(k);
    }
  }

  /**
   * processing/, done/ and failed/ must be real folders inside the drop folder: anyone who can
   * drop a file could otherwise pre-create `done` as a symbolic link and have every input and
   * report moved wherever it points. mkdir -p accepts an existing link, so lstat says.
   * Checked at start and again before each move into the folder.
   */
  private async assertOwnFolder(k: keyof DropLayout): Promise<void> {
    const info = await lstat(this.sub(k)).catch(() => undefined);
    if (info?.isSymbolicLink()) {
      throw new SourceError(
        `the ${k} folder ${this.sub(k)} is a symbolic link; refusing to move files through it (make it a real folder)`,
        'usage',
      );
    }
    if (info && !info.isDirectory()) throw new SourceError(`${this.sub(k)} is not a folder`, 'usage');
  }

  async list(): Promise<ListedInput[]> {
    const entries = await readdir(this.location, { withFileTypes: true });
    const markers = new Set(entries.map((e) => markedInput(e.name)).filter((n): n is string => n !== undefined));
    const out: ListedInput[] = [];
    for (const e of entries) {
      if (!classifyName(e.name).take) continue;
      let info: Stats;
      try {
        info = await lstat(join(this.location, e.name));
      } catch {
        continue; // taken by another instance between readdir and lstat
      }
      if (info.isSymbolicLink())
        this.refuse(e.name, 'is a symbolic link; links are not followed (copy the file in instead)');
      else if (!info.isFile()) this.refuse(e.name, 'is not a regular file');
      else out.push({ name: e.name, size: info.size, mtimeMs: info.mtimeMs, marked: markers.has(e.name) });
    }
    return out;
  }

  private refuse(name: string, why: string): void {
    if (this.refused.has(name)) return;
    this.refused.add(name);
    this.opts.onRefused?.(name, why);
  }

  async claim(name: string): Promise<ClaimedInput | undefined> {
    if (!classifyName(name).take) return undefined;
    await this.assertOwnFolder('processing');
    if (!(await this.createClaim(name))) return undefined;
    // An earlier file of this name is still in processing/ (released at a shutdown): resume
    // that one first; renaming over it would lose it. The new one is taken on a later scan.
    if (
      await lstat(this.sub('processing', name)).then(
        () => true,
        () => false,
      )
    )
      return this.claimed(name);
    try {
      await rename(join(this.location, name), this.sub('processing', name));
    } catch (err) {
      await rm(this.claimFile(name), { force: true });
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    // The marker has served its purpose; left behind it would wave through the next file of this name half-written.
    await rm(join(this.location, `${name}${DONE_MARKER_SUFFIX}`), { force: true });
    return this.claimed(name);
  }

  /** Exclusive create of the claim file; false when one exists (live, or stale but not ours to take here). */
  private async createClaim(name: string): Promise<boolean> {
    try {
      const handle = await open(this.claimFile(name), 'wx');
      try {
        await handle.writeFile(`${JSON.stringify(leaseRecord(this.owner, this.leaseMs))}\n`);
      } finally {
        await handle.close();
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  async claimOrphans(): Promise<ClaimedInput[]> {
    const names = await readdir(this.sub('processing'));
    const present = new Set(names);
    const out: ClaimedInput[] = [];
    for (const name of names) {
      if (!classifyName(name).take) continue;
      const info = await lstat(this.sub('processing', name)).catch(() => undefined);
      if (!info?.isFile()) continue;
      if (present.has(`.${name}.claim`)) {
        if (!(await this.takeOverStale(name))) continue;
      } else if (!(await this.createClaim(name))) continue;
      out.push(this.claimed(name));
    }
    // Claims whose input is gone (a crash between finishing and dropping the claim).
    for (const name of names) {
      const m = /^\.(.+)\.claim$/.exec(name);
      if (m && !present.has(m[1])) {
        const lease = parseLease(await readFile(this.sub('processing', name), 'utf8').catch(() => ''));
        if (isExpired(lease)) await rm(this.sub('processing', name), { force: true });
      }
    }
    return out;
  }

  /**
   * Takes over an expired claim: rename it aside (of several instances, one rename wins),
   * check that what was moved is the stale claim that was read, then create ours.
   */
  private async takeOverStale(name: string): Promise<boolean> {
    const path = this.claimFile(name);
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) return this.createClaim(name);
    if (!isExpired(parseLease(text))) return false;
    const aside = `${path}.${this.owner.replace(/[^A-Za-z0-9]/g, '')}.stale`;
    try {
      await rename(path, aside);
    } catch {
      return false;
    }
    const moved = await readFile(aside, 'utf8').catch(() => '');
    if (moved !== text) {
      // Another instance renewed or took it in between: put its claim back.
      await rename(aside, path).catch(() => undefined);
      return false;
    }
    await rm(aside, { force: true });
    return this.createClaim(name);
  }

  private claimed(name: string): ClaimedInput {
    const path = this.sub('processing', name);
    const claimPath = this.claimFile(name);
    const owner = this.owner;
    const leaseMs = this.leaseMs;
    const holds = async (): Promise<boolean> =>
      parseLease(await readFile(claimPath, 'utf8').catch(() => ''))?.owner === owner;
    return {
      name,
      path,
      location: path,
      renew: async () => {
        if (!(await holds())) return false;
        await writeFileAtomic(claimPath, `${JSON.stringify(leaseRecord(owner, leaseMs))}\n`);
        return true;
      },
      finish: async (outcome: FinishOutcome, beforeMove?: (finalLocation: string) => Promise<void>) => {
        await this.assertOwnFolder(outcome);
        // Found by the chaos suite: a holder whose lease ran out during a stall (slow fsync
        // under load) went on to finish an input another instance had taken over, so both
        // moved it. The claim file is the truth: not ours any more, hands off.
        if (!(await holds())) throw new ClaimLostError(`the claim on ${name} was taken over by another instance`);
        const finalName = await this.freeName(outcome, name);
        const finalPath = this.sub(outcome, finalName);
        await beforeMove?.(finalPath);
        const reports = reportNames(name);
        const finalReports = reportNames(finalName);
        for (let i = 0; i < reports.length; i++) {
          await rename(this.sub('processing', reports[i]), this.sub(outcome, finalReports[i])).catch(
            (err: NodeJS.ErrnoException) => {
              if (err.code !== 'ENOENT') throw err;
            },
          );
        }
        await rename(path, finalPath);
        await rm(claimPath, { force: true });
        return finalPath;
      },
      release: async () => {
        if (await holds()) await rm(claimPath, { force: true });
      },
    };
  }

  /** `name`, or a timestamped variant when done/ or failed/ already has it or its reports. */
  private async freeName(outcome: FinishOutcome, name: string): Promise<string> {
    const now = new Date();
    for (let attempt = 0; ; attempt++) {
      const candidate = attempt === 0 ? name : timestampedName(name, now, attempt - 1);
      const taken = await Promise.all(
        [candidate, ...reportNames(candidate)].map((n) =>
          lstat(this.sub(outcome, n)).then(
            () => true,
            () => false,
          ),
        ),
      );
      if (!taken.includes(true)) return candidate;
    }
  }

  async close(): Promise<void> {}
}
