import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/manifest/model.js';
import { restatesErrorOf } from '../../src/manifest/restated.js';

/**
 * restatesErrorOf answers as the plain rule does, finding by finding against every faulted path
 * (quadratic, so only for small inputs): a finding restates an error on the same item, or where
 * one path is within the other.
 */

/** `inner` is `outer`, or within it (the next character a `.` or a `[`). */
const within = (inner: string, outer: string) =>
  inner === outer || (inner.startsWith(outer) && (inner[outer.length] === '.' || inner[outer.length] === '['));
const itemOf = (path: string) => /^jobs\[\d+\]\.items\[\d+\]/.exec(path)?.[0];

function plain(faulted: readonly string[], field: string | undefined): boolean {
  if (field === undefined) return false;
  const item = itemOf(field);
  return faulted.some((f) => (item !== undefined && within(f, item)) || within(f, field) || within(field, f));
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomPath(next: () => number): string | undefined {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T;
  const job = `jobs[${Math.floor(next() * 4)}]`;
  const item = `${job}.items[${Math.floor(next() * 3)}]`;
  return pick([
    undefined,
    'jobs',
    'defaults',
    'defaults.deliveryAddress.city',
    job,
    `${job}.orderNumber`,
    `${job}.deliveryAddress`,
    `${job}.deliveryAddress.postalCode`,
    `${job}.items`,
    item,
    `${item}.quantity`,
    `${item}.code`,
    `${item}.sizeQuantities.M`,
    `${job}.itemsX`,
    'jobs[10].items[0].code',
  ]);
}

const error = (field: string | undefined, severity: Diagnostic['severity'] = 'error'): Diagnostic => ({
  severity,
  code: 'schema.test',
  message: 'm',
  ...(field === undefined ? {} : { field }),
});

describe('restatesErrorOf', () => {
  it('answers as a comparison with every faulted path does', () => {
    const next = seeded(20261130);
    for (let round = 0; round < 300; round++) {
      const diagnostics = Array.from({ length: Math.floor(next() * 8) }, () =>
        error(randomPath(next), next() < 0.2 ? 'warning' : 'error'),
      );
      const faulted = diagnostics.flatMap((d) => (d.severity === 'error' && d.field !== undefined ? [d.field] : []));
      const restated = restatesErrorOf(diagnostics);
      for (let q = 0; q < 20; q++) {
        const field = randomPath(next);
        expect(restated(field), `${field} against ${JSON.stringify(faulted)}`).toBe(plain(faulted, field));
      }
    }
  });

  it('holds to the errors there were when it was made, whatever is added before the first question', () => {
    const diagnostics = [error('jobs[0].items[1].quantity')];
    const restated = restatesErrorOf(diagnostics);
    diagnostics.push(error('jobs[1].orderNumber'));
    expect(restated('jobs[1].orderNumber')).toBe(false);
    expect(restated('jobs[0].items[1].code')).toBe(true);
    expect(restated(undefined)).toBe(false);
  });
});
