import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineStarts } from '../../src/manifest/csv/line-starts.js';

/** Line starts found chunk by chunk are those of the whole text, however the chunks fall (CRLF split across two). */
describe('LineStarts', () => {
  it('finds every line start, LF, CR and CRLF once each, across any chunking', () => {
    const text = fc.array(fc.constantFrom('a', ',', '\r', '\n', '\r\n', 'é'), { maxLength: 80 }).map((s) => s.join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat(90), { maxLength: 6 }), fc.constantFrom(0, 3), (s, cuts, from) => {
        const bytes = Buffer.from(`${from > 0 ? '\uFEFF' : ''}${s}`, 'utf8');
        const want: number[] = [from];
        for (const m of bytes.toString('latin1').matchAll(/\r\n|\n|\r/g))
          if (m.index >= from) want.push(m.index + m[0].length);
        const lines = new LineStarts(from);
        const bounds = [from, ...cuts.map((c) => from + (c % (bytes.length + 1 - from || 1))).sort((a, b) => a - b)];
        bounds.push(Math.max(from, bytes.length));
        for (let i = 0; i + 1 < bounds.length; i++) lines.scan(bytes.subarray(bounds[i], bounds[i + 1]), bounds[i]);
        lines.end();
        const got = want.map((_, n) => lines.at(n + 1));
        expect(got).toEqual(want);
        expect(lines.at(want.length + 1)).toBe(-1);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps only the lines not yet asked for', () => {
    const lines = new LineStarts(0);
    for (let chunk = 0; chunk < 100; chunk++) {
      lines.scan(Buffer.from('x\n'.repeat(1000)), chunk * 2000);
      expect(lines.at(chunk * 1000 + 1)).toBe(chunk * 2000);
    }
    expect(lines.at(5)).toBe(-1);
  });
});
