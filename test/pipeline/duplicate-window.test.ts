import { describe, expect, it } from 'vitest';
import { durationText, parseOffset } from '../../src/core/clock.js';
import {
  CONTENT_ORDERS,
  type ContentOrder,
  contentOrders,
  suspectedOf,
  withContentOrder,
} from '../../src/pipeline/guard-notes.js';
import { holdsInput } from '../../src/pipeline/job-status.js';
import { SETTINGS } from '../../src/core/config/settings.js';
import { parseSettingValue } from '../../src/core/config/parse-setting.js';

const HOUR = 3_600_000;
const NIGHT_1 = Date.parse('2026-11-27T02:00:00Z');
const DEFAULT_WINDOW = parseSettingValue(SETTINGS.duplicateWindow.type, SETTINGS.duplicateWindow.default, 'default', {
  baseDir: '/',
  home: '/',
}) as number;

const sent = (orderNumber: string, at: number, input = 'input-a'): ContentOrder => ({
  orderNumber,
  jobNumber: 700_001,
  at: new Date(at).toISOString(),
  input,
});

const suspects = (
  orders: ContentOrder[],
  job: { orderNumber: string; input: string },
  now: number,
  window = DEFAULT_WINDOW,
) => suspectedOf(orders, job, now, window).map((o) => o.orderNumber);

describe('the suspected-duplicate window', () => {
  it('is the same night by default: 12 hours', () => {
    expect(DEFAULT_WINDOW).toBe(12 * HOUR);
  });

  it('holds a re-send within the night and lets the next night’s reorder through', () => {
    const index = [sent('REORDER-1', NIGHT_1)];
    const tonight = { orderNumber: 'REORDER-1B', input: 'input-b' };
    expect(suspects(index, tonight, NIGHT_1 + HOUR)).toEqual(['REORDER-1']);
    expect(suspects(index, tonight, NIGHT_1 + 12 * HOUR)).toEqual(['REORDER-1']);
    expect(suspects(index, tonight, NIGHT_1 + 12 * HOUR + 1)).toEqual([]);
    expect(suspects(index, { orderNumber: 'REORDER-2', input: 'input-2' }, NIGHT_1 + 24 * HOUR)).toEqual([]);
    // A longer window (opt-in) holds the next night too; 0 holds nothing.
    expect(suspects(index, tonight, NIGHT_1 + 24 * HOUR, 7 * 24 * HOUR)).toEqual(['REORDER-1']);
    expect(suspects(index, tonight, NIGHT_1 + HOUR, 0)).toEqual([]);
  });

  it('never suspects an order of the same input, nor the same order number', () => {
    const index = [sent('PO-1', NIGHT_1, 'file-sha')];
    expect(suspects(index, { orderNumber: 'PO-2', input: 'file-sha' }, NIGHT_1 + HOUR)).toEqual([]);
    expect(suspects(index, { orderNumber: 'PO-1', input: 'other-sha' }, NIGHT_1 + HOUR)).toEqual([]);
  });

  it('names the newest suspect first, and an order from a clock set back counts as within', () => {
    const index = [sent('A', NIGHT_1 - 2 * HOUR, 'x'), sent('B', NIGHT_1 - HOUR, 'y'), sent('C', NIGHT_1 + HOUR, 'z')];
    expect(suspects(index, { orderNumber: 'D', input: 'w' }, NIGHT_1)).toEqual(['C', 'B', 'A']);
  });

  it('an unreadable time never holds anything', () => {
    const index = [{ orderNumber: 'A', at: 'yesterday', input: 'x' }];
    expect(suspects(index, { orderNumber: 'B', input: 'y' }, NIGHT_1)).toEqual([]);
  });
});

describe('the content index entry', () => {
  it('keeps the newest orders, one record per order number, at most CONTENT_ORDERS', () => {
    let note: unknown;
    for (let i = 0; i < CONTENT_ORDERS + 3; i++) note = withContentOrder(note, sent(`PO-${i}`, NIGHT_1 + i));
    note = withContentOrder(note, sent('PO-5', NIGHT_1 + 100));
    const orders = contentOrders(note).map((o) => o.orderNumber);
    expect(orders).toHaveLength(CONTENT_ORDERS);
    expect(orders.at(-1)).toBe('PO-5');
    expect(new Set(orders).size).toBe(orders.length);
  });

  it('reads an entry of the first version as one order of no known input', () => {
    const v1 = { noteVersion: 1, orderNumber: 'OLD-1', jobNumber: 7, at: '2026-11-27T02:00:00.000Z' };
    expect(contentOrders(v1)).toEqual([{ orderNumber: 'OLD-1', jobNumber: 7, at: v1.at, input: '' }]);
    expect(contentOrders(undefined)).toEqual([]);
    expect(contentOrders({ noteVersion: 2, orders: [{ orderNumber: 1 }, null] })).toEqual([]);
  });
});

describe('all or nothing with held jobs', () => {
  const held = (...codes: string[]) => ({
    outcome: 'awaiting-approval' as const,
    holdReasons: codes.map((code) => ({ code, message: code })),
  });

  it('a suspected duplicate holds only itself; a limit, a failure or a refusal holds the input', () => {
    expect(holdsInput(held('approval.duplicate'))).toBe(false);
    expect(holdsInput(held('approval.duplicate', 'approval.job-cost'))).toBe(true);
    expect(holdsInput(held('approval.line-quantity'))).toBe(true);
    expect(holdsInput(held())).toBe(true);
    expect(holdsInput({ outcome: 'refused' })).toBe(true);
    expect(holdsInput({ outcome: 'not-created' })).toBe(true);
    expect(holdsInput({ outcome: 'ready' })).toBe(false);
  });
});

describe('durationText', () => {
  it('writes a length of time as parseOffset reads it', () => {
    expect(durationText(12 * HOUR)).toBe('12h');
    expect(durationText(36 * HOUR)).toBe('1d12h');
    expect(durationText(7 * 24 * HOUR)).toBe('7d');
    expect(durationText(0)).toBe('0');
    for (const ms of [1, 999, 61_000, 90 * 60_000, 12 * HOUR + 1, 366 * 24 * HOUR]) {
      expect(parseOffset(durationText(ms))).toBe(ms);
    }
  });
});
