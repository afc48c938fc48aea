import { lstat, mkdir, opendir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { holdLease, type LeaseStore } from '../lease.js';
import { removeStrayTemporaries } from '../stray-temporaries.js';
import { type DecidedEntry, foldedOrders, foldOf, foldText } from './folder-fold.js';
import {
  FOLDED,
  isEntryName,
  isKeptName,
  LAYOUT,
  layoutText,
  NOTES,
  ORDERS,
  orderShard,
  parseEntry,
  readEntry,
  readText,
  shardedNote,
  unlessMissing,
} from './folder-layout.js';
import { type CompactPolicy, type CompactResult, type LedgerEntry, LedgerEntryUnreadableError } from './model.js';
import { safeName } from './safe-name.js';

/** One account folder of a folder ledger, and the leases its locks are made of. */
export interface CompactTarget {
  dir: string;
  account: string;
  locks: LeaseStore;
  mode?: number;
}

/**
 * One compaction of an account folder (docs/reliability.md#how-long-the-ledger-keeps-what), by
 * one process at a time (the account lock `.compact`; another one running, this one does
 * nothing): moves what an older version left flat into shards, folds the entries decided
 * before `policy.foldBefore` into their shard's compact index, and removes expired notes.
 * `layout`: the account folder is in this version's layout (nothing is left flat).
 */
export async function compactAccount(
  t: CompactTarget,
  policy: CompactPolicy,
): Promise<CompactResult & { layout: boolean }> {
  const lease = await t.locks.tryAcquire(join(t.dir, '.compact.lock'));
  if (!lease) return { folded: 0, notes: 0, moved: 0, layout: false };
  return holdLease(t.locks, lease, async () => {
    const { moved, layout } = await moveFlat(t);
    // Folded only once nothing is flat: a flat copy must never outlive its folded entry.
    const { folded, temporaries, kept } = await eachFolder(
      t,
      layout ? policy.foldBefore : undefined,
      policy.keptBefore,
    );
    const notes = await expireNotes(t, policy.notes);
    return { folded, notes, moved, temporaries, kept, layout };
  });
}

/** Moves the entries and sharded notes of the flat layout into shards; writes `.layout` once none is left. */
async function moveFlat(t: CompactTarget): Promise<{ moved: number; layout: boolean }> {
  if (await exists(join(t.dir, LAYOUT))) return { moved: 0, layout: true };
  let moved = 0;
  let busy = 0;
  // Streamed: a flat folder of years of orders is never read into memory as one list.
  for await (const d of await opendir(t.dir)) {
    if (!d.isFile()) continue;
    if (isEntryName(d.name)) {
      const outcome = await moveEntry(t, d.name);
      if (outcome === 'moved') moved++;
      else if (outcome === 'busy' || outcome === 'unreadable') busy++;
    } else if (shardedNote(d.name) && !d.name.endsWith('.tmp') && !d.name.endsWith('.lock')) {
      await moveInto(join(t.dir, d.name), join(t.dir, NOTES, shardedNote(d.name) as string), t.mode);
      moved++;
    }
  }
  if (busy > 0) return { moved, layout: false };
  await writeFileAtomic(join(t.dir, LAYOUT), layoutText(t.account), { durable: true });
  return { moved, layout: true };
}

/**
 * Moves one flat entry into its shard under the order's lock (a writer holds it while it
 * writes the shard's copy), unless the shard has it already (then the flat copy is the older).
 * A file that is not the entry its name says is left alone. One that cannot be read is left
 * alone too, and keeps the flat layout as it is (moveFlat): with `.layout` written no read
 * would look at it again, and its order would read as one the ledger has never seen.
 */
async function moveEntry(t: CompactTarget, name: string): Promise<'moved' | 'busy' | 'foreign' | 'unreadable'> {
  const flat = join(t.dir, name);
  let entry: LedgerEntry | undefined;
  try {
    entry = await readEntry<LedgerEntry>(flat);
  } catch (err) {
    return err instanceof LedgerEntryUnreadableError ? 'unreadable' : 'foreign';
  }
  if (typeof entry?.orderNumber !== 'string' || `${safeName(entry.orderNumber)}.json` !== name) return 'foreign';
  const shard = join(t.dir, ORDERS, orderShard(entry.orderNumber));
  await mkdir(shard, { recursive: true, mode: t.mode });
  const lease = await t.locks.tryAcquire(join(shard, `${name}.lock`));
  if (!lease) return 'busy';
  try {
    await moveInto(flat, shard, t.mode);
  } finally {
    await lease.release();
  }
  return 'moved';
}

/** Moves `path` into `folder` (one rename), or removes it when `folder` has its name already. */
async function moveInto(path: string, folder: string, mode: number | undefined): Promise<void> {
  const name = path.slice(path.lastIndexOf('/') + 1);
  await mkdir(folder, { recursive: true, mode });
  if (await exists(join(folder, name))) await rm(path, { force: true });
  else await rename(path, join(folder, name)).catch(gone);
}

/**
 * One look at every folder of the account: the stray temporaries of each removed (of any
 * name and owner: the account folder holds only the ledger's files), and so are the replaced
 * versions kept since before `keptBefore`; each order shard's old entries folded (when `before`
 * is given).
 */
async function eachFolder(
  t: CompactTarget,
  before: number | undefined,
  keptBefore: number | undefined,
): Promise<{ folded: number; temporaries: number; kept: number }> {
  let folded = 0;
  let temporaries = 0;
  let kept = 0;
  const tidy = async (dir: string, names: readonly string[]): Promise<void> => {
    temporaries += await removeStrayTemporaries(dir, names);
    if (keptBefore !== undefined) kept += await removeKept(dir, names, keptBefore);
  };
  const notes = await unlessMissing(readdir(join(t.dir, NOTES)), []);
  for (const dir of [t.dir, join(t.dir, '.locks'), ...notes.map((n) => join(t.dir, NOTES, n))])
    await tidy(dir, await unlessMissing(readdir(dir), []));
  for (const shard of (await unlessMissing(readdir(join(t.dir, ORDERS)), [])).sort()) {
    const path = join(t.dir, ORDERS, shard);
    const names = await unlessMissing(readdir(path), []);
    await tidy(path, names);
    if (before !== undefined) folded += await foldShard(t, path, names, before);
  }
  return { folded, temporaries, kept };
}

/**
 * Removes the replaced versions (keptName) in `dir` given their second name before `before`
 * (their ctime: the link's time); never throws for one of them.
 */
async function removeKept(dir: string, names: readonly string[], before: number): Promise<number> {
  let removed = 0;
  for (const name of names) {
    if (!isKeptName(name)) continue;
    const path = join(dir, name);
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isFile() || info.ctimeMs >= before) continue;
    await rm(path, { force: true }).then(
      () => removed++,
      () => undefined,
    );
  }
  return removed;
}

/**
 * Folds a shard's entries decided before `before` into its compact index: the index is
 * rewritten first (atomically, fsynced), then each entry is removed under its lock if it is
 * still what was folded — a reader who misses the entry finds the order in the index. Files
 * written since `before` (their mtime) are not even read.
 */
async function foldShard(t: CompactTarget, shard: string, names: string[], before: number): Promise<number> {
  const old: { path: string; text: string; entry: DecidedEntry }[] = [];
  for (const name of names) {
    if (!isEntryName(name)) continue;
    const path = join(shard, name);
    const info = await stat(path).catch(() => undefined);
    if (!info || info.mtimeMs >= before) continue;
    // An entry that cannot be read (decidedEntry: nor parsed) is left as it is, never removed.
    const text = await readText(path).catch(() => undefined);
    const entry = text === undefined ? undefined : decidedEntry(text);
    if (text !== undefined && entry && decidedBefore(entry, before)) old.push({ path, text, entry });
  }
  if (old.length === 0) return 0;
  const index = join(shard, FOLDED);
  const orders = new Map(foldedOrders(await readText(index)).map((f) => [f.o, f]));
  for (const { entry } of old) orders.set(entry.orderNumber, foldOf(entry));
  await writeFileAtomic(index, foldText(orders.values()), { durable: true });
  let folded = 0;
  for (const { path, text } of old) {
    const lease = await t.locks.tryAcquire(`${path}.lock`);
    // Held: being decided or changed now; folded again by a later compaction.
    if (!lease) continue;
    try {
      if ((await readText(path)) !== text) continue;
      await rm(path, { force: true });
      folded++;
    } finally {
      await lease.release();
    }
  }
  return folded;
}

function decidedEntry(text: string): DecidedEntry | undefined {
  try {
    const entry = parseEntry<LedgerEntry>(text);
    return entry.state === 'submitted' || entry.state === 'failed' ? (entry as DecidedEntry) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether everything the entry records happened before `before`; an unreadable time keeps it. */
function decidedBefore(entry: LedgerEntry, before: number): boolean {
  const times = [entry.intentAt, entry.outcomeAt, entry.cancelRequestedAt, entry.cancelledAt];
  return times.every((t) => t === undefined || Date.parse(t) < before);
}

/** Removes the notes each rule says have expired; a note rewritten while it was judged stays. */
async function expireNotes(t: CompactTarget, rules: CompactPolicy['notes']): Promise<number> {
  let removed = 0;
  for (const rule of rules) {
    for (const path of await notePaths(t, rule.prefix)) {
      const info = await stat(path).catch(() => undefined);
      if (!info || info.mtimeMs >= rule.before) continue;
      const value = await readFile(path, 'utf8').then(
        (text) => JSON.parse(text) as unknown,
        () => undefined,
      );
      const at = rule.at(value);
      if (at !== undefined && at >= rule.before) continue;
      if ((await stat(path).catch(() => undefined))?.mtimeMs !== info.mtimeMs) continue;
      await rm(path, { force: true });
      removed++;
    }
  }
  return removed;
}

async function notePaths(t: CompactTarget, prefix: string): Promise<string[]> {
  const named = (dir: string, names: string[]) =>
    names.filter((n) => n.startsWith(prefix) && !n.endsWith('.tmp') && !n.endsWith('.lock')).map((n) => join(dir, n));
  if (shardedNote(prefix) === undefined) return named(t.dir, await unlessMissing(readdir(t.dir), []));
  const root = join(t.dir, NOTES);
  const out: string[] = [];
  for (const shard of await unlessMissing(readdir(root), []))
    out.push(...named(join(root, shard), await unlessMissing(readdir(join(root, shard)), [])));
  return out;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

/** A rename whose source went meanwhile (another compaction, a delete) is done. */
function gone(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}
