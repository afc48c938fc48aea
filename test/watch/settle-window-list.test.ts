import { describe, expect, it } from 'vitest';
import { SettleList, type Settling, settleVerdict } from '../../src/watch/settle-window.js';

const file = (name: string): Omit<Settling, 'until'> => ({
  outcome: 'done',
  name,
  location: `/drop/done/${name}`,
  dev: 1,
  ino: name.length,
  size: 10,
  mtimeMs: 1000,
});
const stats = (over: Partial<{ dev: number; ino: number; size: number; mtimeMs: number; file: boolean }> = {}) => ({
  dev: 1,
  ino: 6,
  size: 10,
  mtimeMs: 1000,
  ...over,
  isFile: () => over.file ?? true,
});

describe('SettleList', () => {
  it('keeps a file for the window, then drops it', () => {
    const list = new SettleList(1000);
    list.add(file('a.yaml'), 0);
    expect(list.live(999).map((s) => s.name)).toEqual(['a.yaml']);
    expect(list.live(1000)).toEqual([]);
    expect(list.size).toBe(0);
  });

  it('watches nothing with a window of 0', () => {
    const list = new SettleList(0);
    list.add(file('a.yaml'), 0);
    expect(list.live(0)).toEqual([]);
  });

  it('gives each file its turn when there are more than one look takes', () => {
    const list = new SettleList(1000);
    for (const n of ['a.yaml', 'bb.yaml', 'ccc.yaml']) list.add(file(n), 0);
    expect(list.live(1, 2).map((s) => s.name)).toEqual(['a.yaml', 'bb.yaml']);
    expect(list.live(1, 2).map((s) => s.name)).toEqual(['ccc.yaml', 'a.yaml']);
    expect(list.live(1, 2).map((s) => s.name)).toEqual(['bb.yaml', 'ccc.yaml']);
  });

  it('drops only the entry it was given (a newer one of the same name stays)', () => {
    const list = new SettleList(1000);
    list.add(file('a.yaml'), 0);
    const [old] = list.live(1);
    list.add(file('a.yaml'), 5);
    list.drop(old);
    expect(list.live(6)).toHaveLength(1);
    list.drop(list.live(6)[0]);
    expect(list.size).toBe(0);
  });
});

describe('settleVerdict', () => {
  const s = { ...file('a.yaml'), until: 1000 };
  it('same, changed by size or time, gone when another inode, not a file or missing', () => {
    expect(settleVerdict(s, stats())).toEqual({ kind: 'same' });
    expect(settleVerdict(s, stats({ size: 20 }))).toEqual({
      kind: 'changed',
      what: 'its size changed from 10 to 20 bytes',
    });
    expect(settleVerdict(s, stats({ mtimeMs: 2000 }))).toEqual({
      kind: 'changed',
      what: 'its modification time changed',
    });
    expect(settleVerdict(s, stats({ ino: 7, size: 20 }))).toEqual({ kind: 'gone' });
    expect(settleVerdict(s, stats({ dev: 2 }))).toEqual({ kind: 'gone' });
    expect(settleVerdict(s, stats({ file: false, size: 20 }))).toEqual({ kind: 'gone' });
    expect(settleVerdict(s, undefined)).toEqual({ kind: 'gone' });
  });
});
