import { cleanUpOnExit, stopCleaningUp } from '../core/exit-cleanup.js';
import { rmSync } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobResult } from '../report/model.js';
import type { JsonSummary, Outcome } from './json-summary.js';

/** Where one input's rows are in the file. */
interface Span {
  at: number;
  bytes: number;
}

/** Text gathered before each write to the file, and bytes copied back at a time. */
const CHUNK = 1 << 16;

/**
 * `--json`'s list of each input's jobs, kept in a temporary file rather than in memory: an
 * input's rows are written as it ends, while its report's jobs can still be read, and copied
 * back into the summary at the end, so a run of a million jobs never holds every job's result
 * until it exits. The file is private (a folder of mkdtemp's, mode 0600) and removed by close(),
 * or as the process exits before that (a reader that closed stdout ends the command at once).
 */
export class JsonJobRows {
  private readonly spans = new Map<Outcome, Span>();
  private size = 0;

  /** Its folder goes however the process ends (core/exit-cleanup.ts). */
  private readonly leftover = { cleanUp: (): void => rmSync(this.dir, { recursive: true, force: true }) };

  private constructor(
    private readonly dir: string,
    private readonly handle: FileHandle,
  ) {
    cleanUpOnExit(this.leftover);
  }

  static async open(): Promise<JsonJobRows> {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-json-'));
    try {
      return new JsonJobRows(dir, await open(join(dir, 'jobs'), 'wx+', 0o600));
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Writes the rows of the outcome's jobs (`row` of each), comma-separated, as JSON. */
  async add(outcome: Outcome, row: (job: JobResult) => object): Promise<void> {
    const jobs = outcome.report?.jobs;
    if (jobs === undefined) return;
    const span = { at: this.size, bytes: 0 };
    let text = '';
    for (let j = 0; j < jobs.length; j++) {
      text += `${j === 0 ? '' : ','}${JSON.stringify(row(jobs[j] as JobResult))}`;
      if (text.length >= CHUNK) {
        span.bytes += await this.append(text);
        text = '';
      }
    }
    if (text !== '') span.bytes += await this.append(text);
    this.spans.set(outcome, span);
  }

  /**
   * Writes `summary` (jsonSummary's object, each input's `jobs` an empty array) to `out` as one
   * JSON line, each input's `jobs` filled with the rows add() wrote for it: the same text as
   * JSON.stringify of the summary with the rows in place, which is made of its parts' texts.
   */
  async write(out: NodeJS.WritableStream, summary: JsonSummary, outcomes: readonly Outcome[]): Promise<void> {
    const { inputs, ...rest } = summary;
    const head = JSON.stringify(rest);
    // `inputs` comes after command and exitCode, and before what follows it (skipped).
    const [before, after] = splitAfterExitCode(head);
    await send(out, `${before},"inputs":[`);
    for (const [k, input] of inputs.entries()) {
      const text = JSON.stringify(input);
      const span = this.spans.get(outcomes[k] as Outcome);
      const separator = k === 0 ? '' : ',';
      if (span === undefined) {
        await send(out, `${separator}${text}`);
        continue;
      }
      if (!text.endsWith('"jobs":[]}')) throw new Error('an input of the --json summary ends without its jobs');
      await send(out, `${separator}${text.slice(0, -2)}`);
      await this.copy(out, span);
      await send(out, ']}');
    }
    await send(out, `]${after}\n`);
  }

  async close(): Promise<void> {
    stopCleaningUp(this.leftover);
    await this.handle.close().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async append(text: string): Promise<number> {
    const bytes = Buffer.from(text);
    await this.handle.write(bytes, 0, bytes.length, this.size);
    this.size += bytes.length;
    return bytes.length;
  }

  private async copy(out: NodeJS.WritableStream, { at, bytes }: Span): Promise<void> {
    for (let done = 0; done < bytes; ) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, bytes - done));
      const { bytesRead } = await this.handle.read(chunk, 0, chunk.length, at + done);
      if (bytesRead === 0) throw new Error('the --json rows file ended early');
      await send(out, chunk.subarray(0, bytesRead));
      done += bytesRead;
    }
  }
}

/** `{"command":…,"exitCode":N…}` cut after the exit code: what comes before `inputs`, and what after (without the brace). */
function splitAfterExitCode(head: string): [string, string] {
  const m = /^\{"command":(?:"(?:[^"\\]|\\.)*"),"exitCode":-?\d+/.exec(head);
  if (m === null) throw new Error('the --json summary does not begin with its command and exit code');
  return [m[0], head.slice(m[0].length)];
}

/** Writes in turn: waits while `out` is full; a stream already closed (a reader gone) takes nothing more. */
async function send(out: NodeJS.WritableStream, chunk: string | Uint8Array): Promise<void> {
  const stream = out as NodeJS.WritableStream & { destroyed?: boolean; writableNeedDrain?: boolean };
  if (stream.destroyed) return;
  if (out.write(chunk)) return;
  if (stream.destroyed) return;
  await Promise.race([once(out, 'drain'), once(out, 'close')]).catch(() => undefined);
}
