import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  childPath,
  formatPath,
  itemIndexOf,
  jobIndexOf,
  parsePath,
  pointerKeys,
} from '../../src/manifest/field-path.js';

describe('field paths', () => {
  it.each([
    [['jobs', 3, 'items', 0, 'quantity'], 'jobs[3].items[0].quantity'],
    [['jobs', 0, 'items', 1, 'attributes', 'DG-X'], 'jobs[0].items[1].attributes.DG-X'],
    [['jobs', 0, 'items', 1, 'sizeQuantities', '2XL'], 'jobs[0].items[1].sizeQuantities.2XL'],
    [['jobs', 0, 'items', 1, 'attributes', 'Ink colour'], 'jobs[0].items[1].attributes["Ink colour"]'],
    [['defaults', 'deliveryAddress', '<<'], 'defaults.deliveryAddress["<<"]'],
    [[], ''],
  ])('%j ⇄ %s', (segments, text) => {
    expect(formatPath(segments)).toBe(text);
    expect(parsePath(text)).toEqual(segments);
  });

  it('round-trips any segments', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(), fc.string({ minLength: 1 }))), (segments) => {
        expect(parsePath(formatPath(segments))).toEqual(segments);
      }),
    );
  });

  it('finds the job and item a path belongs to', () => {
    expect(jobIndexOf('jobs[12].items[3].code')).toBe(12);
    expect(jobIndexOf('defaults.dateDue')).toBeUndefined();
    expect(jobIndexOf(undefined)).toBeUndefined();
    expect(itemIndexOf('jobs[12].items[3].code')).toEqual([12, 3]);
    expect(itemIndexOf('jobs[12].deliveryAddress')).toBeUndefined();
    expect(childPath('jobs[1]', 'items')).toBe('jobs[1].items');
  });

  it('reads JSON pointers back to their keys', () => {
    expect(pointerKeys('')).toEqual([]);
    expect(pointerKeys('/jobs/0/attributes/a~1b~0c')).toEqual(['jobs', '0', 'attributes', 'a/b~c']);
    expect(pointerKeys('/~01')).toEqual(['~1']);
  });
});
