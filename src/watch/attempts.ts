import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Poison-file protection for `watch`: how often processing of one input began without ending.
 * A count is written before an input is processed and removed when processing ends in any
 * way the process survives (done, failed, retry later, claim lost); only a crash (out of
 * memory, abort, kill -9) leaves it behind. The next instance that resumes the input sees the
 * count and, past the limit, sets the input aside instead of dying on it again.
 *
 * Kept in the state directory, one small file per input, named by a hash of the drop
 * location, the input's name and its bytes: the same name with other content starts afresh.
 */
export class InputAttempts {
  constructor(
    private readonly dir: string,
    /** Processing runs a crash may interrupt before the input is set aside (the `watchMaxInputAttempts` setting). */
    readonly max: number,
  ) {}

  /**
   * The key of the input known as `name` at `location` whose bytes hash to `sha256` (the hash
   * the claim took while copying it: ClaimedInput.sha256, so the input is not read again).
   */
  keyOf(location: string, name: string, sha256: string): string {
    return createHash('sha256').update(`${location}\0${name}\0${sha256}`).digest('hex').slice(0, 32);
  }

  /** Records one more run and returns how many runs (this one included) began for the input. */
  async begin(key: string): Promise<number> {
    // Read and rewritten in place, one small write: a crash of this process (the only thing
    // counted) cannot tear it, and nothing is created but the file itself. Not fsynced: the
    // count is about crashes of this process (out of memory, kill -9), which leave the page
    // cache, and so the count, intact; a power cut says nothing about the input.
    const openCount = () => open(this.path(key), constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    let handle: FileHandle;
    try {
      handle = await openCount();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // The folder is made at the first run (not looked up at every one).
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      handle = await openCount();
    }
    try {
      const buf = Buffer.alloc(32);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      const before = Number.parseInt(buf.toString('latin1', 0, bytesRead), 10);
      const n = (Number.isFinite(before) && before > 0 ? before : 0) + 1;
      const text = Buffer.from(`${n}\n`);
      await handle.write(text, 0, text.length, 0);
      if (bytesRead > text.length) await handle.truncate(text.length);
      return n;
    } finally {
      await handle.close();
    }
  }

  /** Processing ended without a crash: forget the count. */
  async end(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  private path(key: string): string {
    return join(this.dir, `${key}.attempts`);
  }
}
