import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FolderLedger } from '../../../src/storage/ledger/folder-ledger.js';

const account = 'http://127.0.0.1/us/api#1001';
const NOTE = '.content-0123456789abcdef';

interface Tally {
  seen: number[];
}

async function ledgerIn(): Promise<{ ledger: FolderLedger; state: string }> {
  const state = await mkdtemp(join(tmpdir(), 'htorder-note-updates-'));
  return { ledger: new FolderLedger(state), state };
}

/** How many versions of the note were written: each write but the first keeps the one it replaced. */
async function writesOf(state: string, name: string): Promise<number> {
  const ledgerDir = join(state, 'ledger');
  const [accountDir] = await readdir(ledgerDir);
  const notes = join(ledgerDir, accountDir!, 'notes');
  let kept = 0;
  for (const shard of await readdir(notes)) {
    kept += (await readdir(join(notes, shard))).filter((n) => n.startsWith(`.${name}.`) && n.endsWith('.old')).length;
  }
  return kept + 1;
}

describe('updates of one note made side by side', () => {
  it('keeps every update, as if made one after another, in fewer writes than updates', async () => {
    const { ledger, state } = await ledgerIn();
    const n = 40;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        ledger.updateNote<Tally>(account, NOTE, async (note) => ({ seen: [...(note?.seen ?? []), i] }), {
          durable: false,
        }),
      ),
    );
    expect((await ledger.readNote<Tally>(account, NOTE))?.seen).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(await writesOf(state, NOTE)).toBeLessThan(n);
  });

  it('answers each update once the note holds it', async () => {
    const { ledger } = await ledgerIn();
    const answered = Array.from({ length: 12 }, (_, i) =>
      ledger
        .updateNote<Tally>(account, NOTE, async (note) => ({ seen: [...(note?.seen ?? []), i] }))
        .then(async () => (await ledger.readNote<Tally>(account, NOTE))?.seen ?? []),
    );
    const seenAt = await Promise.all(answered);
    for (const [i, seen] of seenAt.entries()) expect(seen).toContain(i);
  });

  it('fails only the update whose change failed, and writes nothing for a change that keeps the note', async () => {
    const { ledger } = await ledgerIn();
    const results = await Promise.allSettled(
      [1, 2, 3, 4, 5].map((i) =>
        ledger.updateNote<Tally>(account, NOTE, async (note) => {
          if (i === 2) throw new Error('change 2 failed');
          if (i === 4) return undefined;
          return { seen: [...(note?.seen ?? []), i] };
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('change 2 failed');
    expect((await ledger.readNote<Tally>(account, NOTE))?.seen).toEqual([1, 3, 5]);
  });

  it('matches updates made one at a time, however they are asked for (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            note: fc.constantFrom('.content-a', '.spent-b'),
            kind: fc.constantFrom('add', 'add', 'add', 'keep', 'fail'),
            pause: fc.boolean(),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        async (updates) => {
          const { ledger } = await ledgerIn();
          const expected = new Map<string, number[]>();
          const asked: Promise<string>[] = [];
          for (const [i, u] of updates.entries()) {
            if (u.kind === 'add') expected.set(u.note, [...(expected.get(u.note) ?? []), i]);
            asked.push(
              ledger
                .updateNote<Tally>(
                  account,
                  u.note,
                  async (note) => {
                    if (u.kind === 'fail') throw new Error(`change ${i} failed`);
                    return u.kind === 'keep' ? undefined : { seen: [...(note?.seen ?? []), i] };
                  },
                  // As the guardrails update them: the day's spend under an account lock, the content index without.
                  u.note === '.spent-b' ? { lock: '.spent-lock' } : { durable: false },
                )
                .then(
                  () => 'fulfilled',
                  () => 'rejected',
                ),
            );
            if (u.pause) await setImmediate();
          }
          expect(await Promise.all(asked)).toEqual(updates.map((u) => (u.kind === 'fail' ? 'rejected' : 'fulfilled')));
          for (const note of ['.content-a', '.spent-b'])
            expect((await ledger.readNote<Tally>(account, note))?.seen).toEqual(expected.get(note));
        },
      ),
      { numRuns: 25 },
    );
  });
});
