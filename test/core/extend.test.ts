import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { extend } from '../../src/core/extend.js';
import { priceLine } from '../../src/resolve/estimate/line-pricing.js';
import { checkedJobs, withFindings, type JobState } from '../../src/pipeline/job-state.js';
import type { Manifest } from '../../src/manifest/model.js';
import type { Diagnostic } from '../../src/manifest/model.js';

// V8's own test of whether two objects share a hidden class, for functions compiled after the flag.
setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const hasFastProperties = new Function('a', 'return %HasFastProperties(a)') as (a: object) => boolean;

/** Whether the objects `make` returns share one hidden class once V8 has warmed the call site up. */
function shareHiddenClass(make: (i: number) => object): boolean {
  const made: object[] = [];
  for (let i = 0; i < 300; i++) made.push(make(i));
  return made.slice(200).every((o, k, all) => k === 0 || haveSameMap(all[k - 1], o));
}

describe('objects a run keeps per job share hidden classes (memory per job)', () => {
  it('extend says what a spread says, keys in the same order, getters read', () => {
    const base = {
      a: 1,
      get lazy() {
        return 'x';
      },
      b: 2,
    };
    const out = extend(base, { b: 3, c: 4 });
    expect(JSON.stringify(out)).toBe(JSON.stringify({ ...base, b: 3, c: 4 }));
    expect(Object.keys(out)).toEqual(['a', 'lazy', 'b', 'c']);
    expect(Object.getOwnPropertyDescriptor(out, 'lazy')).toMatchObject({ value: 'x', writable: true });
  });

  it('extend defines an own __proto__ key, as a spread does, and never sets the prototype', () => {
    const base = JSON.parse('{"a": 1, "__proto__": {"polluted": true}}') as Record<string, unknown>;
    const out = extend(base, { b: 2 }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out.polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['a', '__proto__', 'b']);
    const more = JSON.parse('{"__proto__": {"polluted": true}}') as object;
    expect(Object.getPrototypeOf(extend({ a: 1 }, more))).toBe(Object.prototype);
  });

  it('extend shares one hidden class where a spread followed by keys makes one per object', () => {
    expect(shareHiddenClass((i) => extend({ index: i, quantity: 5 }, { unitPrice: 1, total: i }))).toBe(true);
    // What it replaces (Node 20): this is why it exists; a V8 that shares them here too makes it moot.
    const spread = shareHiddenClass((i) => {
      const base = { index: i, quantity: 5 };
      return { ...base, unitPrice: 1, total: i };
    });
    expect(typeof spread).toBe('boolean');
  });

  it("each line's estimate and each job state with findings share one", () => {
    const bands = [{ from: 1, to: null, unitPrice: 1.2 }] as never;
    expect(shareHiddenClass((i) => priceLine({ index: 0, quantity: 50 + i, reset: 3, priceBands: bands }))).toBe(true);
    expect(
      shareHiddenClass((i) => priceLine({ index: 0, quantity: 50 + i, priceBands: [], unpricedReason: 'unknown' })),
    ).toBe(true);
    const warning: Diagnostic = { severity: 'warning', code: 'w', message: 'm', field: 'jobs[0]' };
    const state = (i: number): JobState => ({
      index: i,
      orderNumber: `PO-${i}`,
      hash: 'h',
      outcome: 'checked',
      diagnostics: [],
      unavailable: false,
    });
    expect(shareHiddenClass((i) => withFindings(state(i), [warning]))).toBe(true);
    expect(shareHiddenClass((i) => withFindings(withFindings(state(i), [warning]), [warning]))).toBe(true);
  });

  it("check's first state of every job shares one, its hash read when first asked", () => {
    const jobs = Array.from({ length: 300 }, (_, i) => ({
      orderNumber: `PO-${i}`,
      deliveryAddress: { city: `c${i}` },
      items: [],
    }));
    const states = checkedJobs({ file: 'm.yaml', jobs } as unknown as Manifest, []);
    // Objects in dictionary mode share a map too: each then holds a property table of its own.
    expect(shareHiddenClass((i) => states[i] as object)).toBe(true);
    expect(states.every((state) => hasFastProperties(state))).toBe(true);
    expect(Object.keys(states[0] as object)).toEqual([
      'index',
      'orderNumber',
      'hash',
      'outcome',
      'diagnostics',
      'unavailable',
    ]);
    expect(states[7]?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(states[7]?.hash).not.toBe(states[8]?.hash);
    expect(extend(states[7] as JobState, { outcome: 'ready' }).hash).toBe(states[7]?.hash);
  });
});
