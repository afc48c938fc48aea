import { mkdir, mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { temporaryName, temporaryOf, writeFileAtomic } from '../../src/storage/atomic-write.js';
import { tempDirPerTest } from '../support/temp-files.js';

describe('writeFileAtomic', () => {
  it('replaces the file and leaves no temp file behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-aw-'));
    const target = join(dir, 'x.result.json');
    await writeFileAtomic(target, 'one');
    await writeFileAtomic(target, 'two');
    expect(await readFile(target, 'utf8')).toBe('two');
    expect(await readdir(dir)).toEqual(['x.result.json']);
  });

  it('fails loudly when the directory does not exist, creating nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-aw-'));
    await expect(writeFileAtomic(join(dir, 'missing', 'x'), 'y')).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('gives the new file exactly the mode asked for, whatever the umask takes away, and writes a staged file in place', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'htorder-aw-'));
    // 0664: the usual umask (022) takes the group's write away at the create; it is set again.
    for (const mode of [0o600, 0o644, 0o664]) {
      const target = join(dir, `m${mode.toString(8)}`);
      await writeFileAtomic(target, 'x', { mode });
      expect((await stat(target)).mode & 0o777).toBe(mode);
    }
    // staged: the path itself, created exclusively (no temporary name, no rename over anything).
    const staged = join(dir, '.r.tmp');
    await writeFileAtomic(staged, 'y', { staged: true });
    expect(await readFile(staged, 'utf8')).toBe('y');
    await expect(writeFileAtomic(staged, 'z', { staged: true })).rejects.toThrow(/EEXIST/);
    expect(await readFile(staged, 'utf8')).toBe('y');
  });
});

/** Text of any characters (1 to 4 bytes each in UTF-8) repeated to a UTF-16 length between `min` and about `max`. */
function repeatedText(min: number, max: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), fc.integer({ min, max }))
    .map(([text, n]) => text.repeat(Math.ceil(n / text.length)));
}

describe('temporaryName', () => {
  it('gives each write its own random name beside the target, read back by temporaryOf', () => {
    const names = Array.from({ length: 3000 }, () => temporaryName('/drop/orders.csv.result.json'));
    for (const name of names) {
      expect(name.startsWith('/drop/.orders.csv.result.json.')).toBe(true);
      expect(temporaryOf(name.slice('/drop/'.length))).toEqual({ target: 'orders.csv.result.json', pid: process.pid });
    }
    // 3,000 draws of 32 bits: a repeat has a chance of about 1 in 1,000; bytes used twice, or a
    // counter, would show as many repeats or as a run of neighbours.
    const parts = names.map((name) => Number.parseInt(name.split('.').at(-2) ?? '', 16));
    expect(new Set(parts).size).toBeGreaterThanOrEqual(names.length - 1);
    const neighbours = parts.filter((part, i) => i > 0 && Math.abs(part - parts[i - 1]) < 2 ** 16).length;
    expect(neighbours).toBeLessThan(5);
  });
});

describe('writeFileAtomic of whole content', () => {
  it('writes a string or bytes, small (on this thread) or past the bound (through a file handle), as the same content written in chunks', async () => {
    const dir = await tempDirPerTest('htorder-aw-');
    const content = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      // Text whose UTF-16 length is on either side of the small-write bound, in 1 to 4 bytes a character.
      repeatedText(20_000, 70_000),
      fc.uint8Array({ maxLength: 70_000 }),
    );
    const options = fc.record({
      durable: fc.boolean(),
      mode: fc.constantFrom(undefined, 0o600, 0o664),
    });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(content, options, async (data, opts) => {
        const whole = join(dir, `w${n}.json`);
        const chunked = join(dir, `c${n++}.json`);
        await writeFileAtomic(whole, data, opts);
        await writeFileAtomic(chunked, [data], opts);
        expect((await readFile(whole)).equals(await readFile(chunked))).toBe(true);
        expect((await stat(whole)).mode).toBe((await stat(chunked)).mode);
      }),
      { numRuns: 40 },
    );
    // Nothing but the targets: no temporary of either path left behind.
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('removes the temporary and leaves the target as it was when the write is cancelled before its rename', async () => {
    const dir = await tempDirPerTest('htorder-aw-');
    const target = join(dir, 'entry.json');
    await writeFileAtomic(target, 'before\n');
    for (const data of ['after\n', Buffer.alloc(100_000, 0x61)]) {
      await expect(
        writeFileAtomic(target, data, {
          beforeRename: async () => {
            throw new Error('lock lost');
          },
        }),
      ).rejects.toThrow('lock lost');
    }
    expect(await readFile(target, 'utf8')).toBe('before\n');
    expect(await readdir(dir)).toEqual(['entry.json']);
  });

  it('fails and leaves no temporary when the rename is refused, fsynced or not, small or past the bound', async () => {
    // A folder where the file goes: the rename, not the write, is refused (EISDIR).
    const dir = await tempDirPerTest('htorder-aw-');
    const target = join(dir, 'entry.json');
    await mkdir(join(target, 'inside'), { recursive: true });
    for (const durable of [true, false])
      for (const data of ['intent\n', Buffer.alloc(100_000, 0x61)])
        await expect(writeFileAtomic(target, data, { durable })).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await readdir(dir)).toEqual(['entry.json']);
    expect(await readdir(target)).toEqual(['inside']);
  });
});

/**
 * Chunked content (the big reports): every byte must come out once and in order whatever the
 * chunks' sizes, for text (UTF-8 up to 4 bytes a character) and bytes.
 */
function chunksOf(): (string | Uint8Array)[] {
  const chunks: (string | Uint8Array)[] = [];
  // Small pieces well past a batch, multi-byte text at every offset.
  for (let i = 0; i < 60_000; i++) chunks.push(i % 7 === 0 ? `é€😀${i},` : `row ${i},"x";`);
  chunks.push(Buffer.from('raw bytes between text\n'));
  // One piece bigger than a batch, after others are gathered.
  chunks.push(`${'ü'.repeat(1_500_000)}\n`);
  for (let i = 0; i < 1000; i++) chunks.push(`tail ${i}\n`);
  return chunks;
}

function expected(chunks: readonly (string | Uint8Array)[]): Buffer {
  return Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.from(c))));
}

/** The two ways chunks are written: on libuv's pool (the default) and on the calling thread. */
const writeModes = [
  { how: 'on the pool', options: {} },
  { how: 'on this thread', options: { onThisThread: true } },
] as const;

describe.each(writeModes)('writeFileAtomic of chunks, $how', ({ options }) => {
  it('writes every chunk once and in order, from a synchronous or an asynchronous source', async () => {
    const dir = await tempDirPerTest('htorder-aw-');
    const chunks = chunksOf();
    await writeFileAtomic(join(dir, 'sync.txt'), chunks, options);
    async function* later(): AsyncGenerator<string | Uint8Array> {
      yield* chunks;
    }
    await writeFileAtomic(join(dir, 'async.txt'), later(), options);
    const want = expected(chunks);
    expect((await readFile(join(dir, 'sync.txt'))).equals(want)).toBe(true);
    expect((await readFile(join(dir, 'async.txt'))).equals(want)).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['async.txt', 'sync.txt']);
  });

  it('writes a small report and an empty one whole', async () => {
    const dir = await tempDirPerTest('htorder-aw-');
    await writeFileAtomic(join(dir, 'small.json'), ['{"a":', '"ü€"', '}\n'], options);
    await writeFileAtomic(join(dir, 'empty.txt'), [], options);
    expect(await readFile(join(dir, 'small.json'), 'utf8')).toBe('{"a":"ü€"}\n');
    expect(await readFile(join(dir, 'empty.txt'), 'utf8')).toBe('');
  });

  it('copies byte chunks whose memory the source reuses once the next chunk is asked for', async () => {
    // result.csv's writer hands out one reused buffer; a write still in flight must not see it change.
    const dir = await tempDirPerTest('htorder-aw-');
    const reused = Buffer.alloc(700_000);
    const want: Buffer[] = [];
    async function* source(): AsyncGenerator<string | Uint8Array> {
      for (let i = 0; i < 12; i++) {
        reused.fill(0x41 + i);
        want.push(Buffer.from(reused));
        yield reused;
        want.push(Buffer.from(`line ${i}\n`));
        yield `line ${i}\n`;
      }
    }
    await writeFileAtomic(join(dir, 'bytes.csv'), source(), options);
    expect((await readFile(join(dir, 'bytes.csv'))).equals(Buffer.concat(want))).toBe(true);
  });

  it('leaves neither the file nor a temporary one when the source fails midway', async () => {
    const dir = await tempDirPerTest('htorder-aw-');
    function* failing(): Generator<string> {
      for (let i = 0; i < 5_000; i++) yield `${'x'.repeat(999)}\n`; // several batches in flight first
      throw new Error('source broke');
    }
    await expect(writeFileAtomic(join(dir, 'broken.json'), failing(), options)).rejects.toThrow('source broke');
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes any chunks, text of any characters and reused bytes, as the plain concatenation', async () => {
    const dir = await tempDirPerTest('htorder-aw-');
    const chunk = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      // Text around a batch's length, so pieces gather and split at any character.
      repeatedText(2000, 70_000),
      fc.uint8Array({ maxLength: 3000 }),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(chunk, { maxLength: 30 }), fc.boolean(), async (chunks, reuse) => {
        const want = expected(chunks);
        // A source that hands each byte chunk out in one buffer it overwrites at the next ask.
        const reused = Buffer.alloc(3000);
        async function* source(): AsyncGenerator<string | Uint8Array> {
          for (const c of chunks) {
            if (typeof c === 'string' || !reuse) yield c;
            else {
              reused.set(c);
              yield reused.subarray(0, c.length);
              reused.fill(0x21);
            }
          }
        }
        const target = join(dir, `p${n++}.txt`);
        await writeFileAtomic(target, source(), options);
        expect((await readFile(target)).equals(want)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});

describe('writeFileAtomic of chunks on the pool', () => {
  it("lets other events through while it encodes a long report (a run's API answers)", async () => {
    // Each chunk stands for ~1 ms of encoding; an event queued at the first chunk must run before
    // the last, from a synchronous source (result.json) and an asynchronous one (result.csv).
    const dir = await tempDirPerTest('htorder-aw-');
    const busy = (ms: number) => {
      const end = performance.now() + ms;
      while (performance.now() < end);
    };
    const chunk = Buffer.alloc(1024, 0x61);
    const seen: boolean[] = [];
    function* slow(): Generator<Uint8Array> {
      let ran = false;
      setImmediate(() => {
        ran = true;
      });
      for (let i = 0; i < 40; i++) {
        busy(1);
        yield chunk;
      }
      seen.push(ran);
    }
    async function* slowAsync(): AsyncGenerator<Uint8Array> {
      yield* slow();
    }
    await writeFileAtomic(join(dir, 'sync.json'), slow());
    await writeFileAtomic(join(dir, 'async.csv'), slowAsync());
    expect(seen).toEqual([true, true]);
    expect((await readFile(join(dir, 'sync.json'))).length).toBe(40 * 1024);
    expect((await readFile(join(dir, 'async.csv'))).length).toBe(40 * 1024);
  });
});
