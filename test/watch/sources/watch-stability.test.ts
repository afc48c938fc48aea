import { describe, expect, it } from 'vitest';
import { StabilityTracker } from '../../../src/watch/sources/stability.js';

/** When a file in a drop folder counts as complete (src/watch/sources/stability.ts), for a backlog. */

const f = (size: number, mtimeMs: number, marked = false) => ({ name: 'a.yaml', size, mtimeMs, marked });

describe('StabilityTracker: files already quiet when first seen', () => {
  it('takes a file whose mtime is already the stable time old at the second look, a tenth of it later', () => {
    const t = new StabilityTracker(2000);
    expect(t.confirmMs).toBe(200);
    const now = 1_000_000;
    expect(t.observe([f(10, now - 60_000)], now)).toEqual({ ready: [], nextDueAt: now + 200 });
    expect(t.observe([f(10, now - 60_000)], now + 100).ready).toEqual([]);
    expect(t.observe([f(10, now - 60_000)], now + 200).ready).toEqual(['a.yaml']);
  });

  it('makes a file that changes between the two looks wait the whole stable time, whatever its mtime', () => {
    // A writer on a share whose clock runs behind ours: old-looking mtimes, but growing.
    const t = new StabilityTracker(2000);
    const now = 1_000_000;
    t.observe([f(10, now - 60_000)], now);
    expect(t.observe([f(20, now - 59_000)], now + 200)).toEqual({ ready: [], nextDueAt: now + 2200 });
    expect(t.observe([f(20, now - 59_000)], now + 2100).ready).toEqual([]);
    expect(t.observe([f(20, now - 59_000)], now + 2200).ready).toEqual(['a.yaml']);
  });

  it('makes a recent file (or one dated in the future) wait the whole stable time', () => {
    const t = new StabilityTracker(2000);
    const now = 1_000_000;
    expect(t.observe([f(10, now - 1999)], now).nextDueAt).toBe(now + 2000);
    const u = new StabilityTracker(2000);
    expect(u.observe([f(10, now + 60_000)], now).nextDueAt).toBe(now + 2000);
  });

  it('keeps the second look short but never longer than the stable time', () => {
    expect(new StabilityTracker(0).confirmMs).toBe(0);
    expect(new StabilityTracker(30).confirmMs).toBe(30);
    expect(new StabilityTracker(150).confirmMs).toBe(50);
    expect(new StabilityTracker(60_000).confirmMs).toBe(6000);
  });
});
