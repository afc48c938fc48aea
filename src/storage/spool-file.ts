import { lstatSync, readSync, rmSync } from 'node:fs';
import { type FileHandle, lstat, open, rm } from 'node:fs/promises';
import { cleanUpOnExit, stopCleaningUp } from '../core/exit-cleanup.js';
import { temporaryName } from './atomic-write.js';

/** Bytes read back per call: enough to make each read worth it, little enough to reuse one buffer. */
const READ_BYTES = 1 << 20;

/**
 * A temporary file that only this process writes and reads: created beside `beside`
 * exclusively (O_EXCL: a planted name is never followed), mode 0600 (it holds what the reports
 * hold, and nobody else has any use for it), written and read back at explicit offsets through
 * its own descriptor, so what is read is what was written even if the name is swapped. Whether
 * the name still names it is checked by device and inode when asked (`verify`) and before it is
 * removed, so a file someone else put there is never read as the spool nor removed. A process
 * that ends without removing it (an error, a signal: core/exit-cleanup.ts) removes it on the way
 * out.
 */
export class SpoolFile {
  /** Bytes written and acknowledged: what `read` may return. The owner advances it. */
  size = 0;
  private gone = false;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly dev: number,
    private readonly ino: number,
  ) {
    cleanUpOnExit(this);
  }

  static async create(beside: string): Promise<SpoolFile> {
    const path = temporaryName(beside);
    const handle = await open(path, 'wx+', 0o600);
    try {
      const mine = await handle.stat();
      const file = new SpoolFile(path, handle, mine.dev, mine.ino);
      await file.verify();
      return file;
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Throws unless the path still names this file. */
  async verify(): Promise<void> {
    if (!(await this.named())) throw new Error(`the temporary report file ${this.path} was removed or replaced`);
  }

  /** Writes all of `data` at `at` (a short write goes on where it stopped). */
  async write(data: Uint8Array, at: number): Promise<void> {
    for (let done = 0; done < data.length; ) {
      const { bytesWritten } = await this.handle.write(data, done, data.length - done, at + done);
      done += bytesWritten;
    }
  }

  /** The file's first `upTo` bytes, a chunk at a time; each chunk's memory is reused for the next. */
  async *read(upTo: number): AsyncGenerator<Uint8Array> {
    if (upTo === 0) return;
    const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, upTo));
    for (let at = 0; at < upTo; ) {
      const { bytesRead } = await this.handle.read(buffer, 0, Math.min(buffer.length, upTo - at), at);
      if (bytesRead === 0)
        throw new Error(`the temporary report file ${this.path} is shorter than what was written to it`);
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }

  /** `length` bytes from `at`, read at once (a job read back while a report is assembled). */
  readSync(at: number, length: number): Buffer {
    const buffer = Buffer.allocUnsafe(length);
    for (let done = 0; done < length; ) {
      const n = readSync(this.handle.fd, buffer, done, length - done, at + done);
      if (n === 0) throw new Error(`the temporary report file ${this.path} is shorter than what was written to it`);
      done += n;
    }
    return buffer;
  }

  /** Closes the file and removes its name when it is still this file's (once; later calls do nothing). */
  async remove(): Promise<void> {
    if (this.gone) return;
    this.gone = true;
    stopCleaningUp(this);
    try {
      if (await this.named()) await rm(this.path, { force: true });
    } finally {
      await this.handle.close();
    }
  }

  /**
   * remove() for a process that is exiting ('exit' listeners run no promise): the name removed
   * when it is still this file's; the descriptor goes with the process.
   */
  removeAtExit(): void {
    if (this.gone) return;
    this.gone = true;
    stopCleaningUp(this);
    const named = lstatSync(this.path, { throwIfNoEntry: false });
    if (named !== undefined && named.dev === this.dev && named.ino === this.ino) rmSync(this.path, { force: true });
  }

  cleanUp(): void {
    this.removeAtExit();
  }

  private async named(): Promise<boolean> {
    const named = await lstat(this.path).catch(() => undefined);
    return named !== undefined && named.dev === this.dev && named.ino === this.ino;
  }
}
