import { createHash } from 'node:crypto';

/** A seeded pseudo-random source (mulberry32): same seed, same sequence, on every platform. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
}

export function createRandom(seed: number): Random {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
  };
}

/**
 * Derives an independent sub-seed from the sandbox seed and a label, so each account's
 * generated data does not depend on the order in which accounts are first touched.
 */
export function deriveSeed(seed: number, label: string): number {
  return createHash('sha256').update(`${seed}:${label}`).digest().readUInt32LE(0);
}

/** A deterministic hex string (for client secrets): stable for a seed, different per label. */
export function deriveHex(seed: number, label: string, length: number): string {
  return createHash('sha256').update(`htorder-sandbox:${seed}:${label}`).digest('hex').slice(0, length);
}
