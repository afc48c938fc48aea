import { describe, expect, it } from 'vitest';
import {
  MAX_INPUT_NAME_BYTES,
  NAME_MAX_BYTES,
  classifyName,
  isSafeName,
  markedInput,
  nameBytes,
  reportNames,
  shortName,
  stampedNamesOf,
  stampedStart,
  timestampedName,
} from '../../../src/watch/sources/drop-names.js';

describe('classifyName', () => {
  it('takes manifests by extension, case-insensitively', () => {
    for (const n of ['orders.yaml', 'orders.YML', 'o.json', 'export 2026.csv', 'Bestellungen.XLSX'])
      expect(classifyName(n)).toEqual({ take: true });
  });

  it.each([
    ['.orders.yaml', 'hidden'],
    ['orders.yaml.tmp', 'temporary'],
    ['orders.csv.part', 'temporary'],
    ['orders.csv.crdownload', 'temporary'],
    ['~$orders.csv', 'temporary'],
    ['orders.csv.result.json', 'report'],
    ['orders.csv.result.csv', 'report'],
    ['orders.csv.errors.txt', 'report'],
    ['orders.csv.tracking.csv', 'report'],
    ['orders.csv.done', 'marker'],
    ['orders.xls', 'extension'],
    ['orders.xlsx.result.csv', 'report'],
    ['README', 'extension'],
    ['..', 'unsafe'],
    ['a/b.yaml', 'unsafe'],
    ['a\\b.yaml', 'unsafe'],
  ])('refuses %s (%s)', (name, reason) => {
    expect(classifyName(name)).toEqual({ take: false, reason });
  });

  it('never takes a report of an input, whatever the input is called', () => {
    for (const input of ['a.yaml', 'b.csv', 'c.json.yaml'])
      for (const r of reportNames(input)) expect(classifyName(r).take).toBe(false);
  });

  it('only accepts single path segments', () => {
    expect(isSafeName('ok.yaml')).toBe(true);
    expect(isSafeName('')).toBe(false);
    expect(isSafeName('x\0.yaml')).toBe(false);
  });
});

describe('markers and clash names', () => {
  it('maps X.done to X', () => {
    expect(markedInput('orders.csv.done')).toBe('orders.csv');
    expect(markedInput('orders.csv')).toBeUndefined();
    expect(markedInput('.done')).toBeUndefined();
  });

  it('puts the timestamp before the extension so the type stays recognisable', () => {
    const at = new Date('2026-11-21T06:03:28.123Z');
    expect(timestampedName('orders.csv', at)).toBe('orders.20261121T060328123Z.csv');
    expect(timestampedName('orders.csv', at, 2)).toBe('orders.20261121T060328123Z-2.csv');
    expect(classifyName(timestampedName('orders.csv', at)).take).toBe(true);
  });

  it('tells the timestamped names of a name, and their reports, from other names sharing its start', () => {
    const at = new Date('2026-11-21T06:03:28.123Z');
    const first = timestampedName('orders.csv', at);
    const second = timestampedName('orders.csv', at, 1);
    expect(first.startsWith(stampedStart('orders.csv'))).toBe(true);
    const entries = [`${first}.result.json`, second, `${second}.errors.txt`, 'orders.csv', 'orders.backup.csv'];
    const others = [`${first}.notes`, 'orders.20261121T060328123Z.yaml', `x${first}`, 'orders.2026.csv'];
    expect(stampedNamesOf('orders.csv', [...entries, ...others])).toEqual([first, second]);
    expect(stampedNamesOf('a+b.(1).csv', [timestampedName('a+b.(1).csv', at), 'a+b.(1).csv'])).toEqual([
      timestampedName('a+b.(1).csv', at),
    ]);
  });
});

describe('names too long to handle', () => {
  it('every name derived from the longest name taken fits the 255-byte limit', () => {
    const name = `${'a'.repeat(MAX_INPUT_NAME_BYTES - 5)}.yaml`;
    const stamped = timestampedName(name, new Date('2026-11-21T06:03:28.123Z'), 999);
    const derived = [`.${name}.claim`, ...reportNames(stamped)].map((n) => `.${n}.4194304.abcdef12.tmp`);
    for (const n of derived) expect(nameBytes(n)).toBeLessThanOrEqual(NAME_MAX_BYTES);
  });

  it('gives a long name a short, unique stand-in that keeps its extension and counts bytes', () => {
    const long = `${'é'.repeat(120)}.csv`;
    const short = shortName(long, 'f'.repeat(64));
    expect(nameBytes(short)).toBeLessThanOrEqual(100 + 1 + 12 + 4);
    expect(short.endsWith('~ffffffffffff.csv')).toBe(true);
    expect(short.startsWith('é'.repeat(50))).toBe(true);
    expect(classifyName(short)).toEqual({ take: true });
    expect(shortName(long, '0'.repeat(64))).not.toBe(short);
  });
});
